package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestCampaignReportRoutes: a campaign's report answers its owner (zeros and null
// rates before anything was sent, the rates' basis said), another account's key
// gets 404 (on retry-failed too; a draft's retry is 409), and bad parameters get 422 naming them; account analytics checks its
// range the same way.
func TestCampaignReportRoutes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "c", "subject": "s",
		"from_email": "a@example.com", "text_template": "hi"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	c := decodeAs[api.Campaign](t, res)

	res = e.do(e.keyA, "GET", "/v1/campaigns/"+itoa(c.Id)+"/report", nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	rep := decodeAs[api.CampaignReport](t, res)
	require.Equal(t, c.Id, rep.CampaignId)
	require.Equal(t, api.ReportRatesBasisSent, rep.Rates.Basis)
	require.Nil(t, rep.Rates.Open)
	require.Nil(t, rep.Delivered)
	require.Equal(t, "other", rep.OtherDomains.Domain)

	res = e.do(e.keyB, "GET", "/v1/campaigns/"+itoa(c.Id)+"/report", nil)
	require.Equal(t, http.StatusNotFound, res.Status, string(res.Body))

	// Retrying failed recipients: another account's campaign is 404, a draft 409.
	res = e.do(e.keyB, "POST", "/v1/campaigns/"+itoa(c.Id)+"/retry-failed", nil)
	require.Equal(t, http.StatusNotFound, res.Status, string(res.Body))
	res = e.do(e.keyA, "POST", "/v1/campaigns/"+itoa(c.Id)+"/retry-failed", nil)
	require.Equal(t, http.StatusConflict, res.Status, string(res.Body))
	require.Contains(t, string(res.Body), `"current_status":"draft"`)

	for path, pointer := range map[string]string{
		"/v1/campaigns/" + itoa(c.Id) + "/report?domains=0":   "/domains",
		"/v1/campaigns/" + itoa(c.Id) + "/report?domains=101": "/domains",
		"/v1/analytics?from=2026-13-01":                       "/from",
		"/v1/analytics?from=2026-02-01&to=2026-01-01":         "/to",
		"/v1/analytics?from=2024-01-01&to=2026-01-01":         "/to",
	} {
		res = e.do(e.keyA, "GET", path, nil)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s: %s", path, res.Body)
		require.Contains(t, string(res.Body), pointer, path)
	}

	res = e.do(e.keyA, "GET", "/v1/analytics?from=2026-01-01&to=2026-01-31", nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	a := decodeAs[api.Analytics](t, res)
	require.Empty(t, a.Days)
	require.Equal(t, "2026-01-01", a.From.String())
}

// TestDuplicateCampaign: a sent campaign is copied as a new draft with its
// content and switches and none of its sends; another account's key gets 404.
func TestDuplicateCampaign(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "november", "subject": "Hello {{.Name}}",
		"from_email": "a@example.com", "text_template": "hi", "track_opens": true})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	c := decodeAs[api.Campaign](t, res)
	_, err := e.pool.Exec(context.Background(), `UPDATE campaigns SET status = 'sent', finished_at = now() WHERE id = $1`, c.Id)
	require.NoError(t, err)

	res = e.do(e.keyB, "POST", "/v1/campaigns/"+itoa(c.Id)+"/duplicate", nil)
	require.Equal(t, http.StatusNotFound, res.Status, string(res.Body))

	res = e.do(e.keyA, "POST", "/v1/campaigns/"+itoa(c.Id)+"/duplicate", nil)
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	d := decodeAs[api.Campaign](t, res)
	require.NotEqual(t, c.Id, d.Id)
	require.Equal(t, "november (copy)", d.Name)
	require.Equal(t, api.CampaignStatus("draft"), d.Status)
	require.Equal(t, c.Subject, d.Subject)
	require.Equal(t, c.TextTemplate, d.TextTemplate)
	require.Equal(t, c.TrackOpens, d.TrackOpens)
	require.Nil(t, d.FinishedAt)
	var sends int
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM sends WHERE campaign_id = $1`, d.Id).Scan(&sends))
	require.Zero(t, sends)
}
