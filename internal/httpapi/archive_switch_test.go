package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// PATCH /v1/campaigns/{id} with archive alone publishes a campaign that already
// went out in the web archive, or withdraws it; any other field of a campaign
// that is no longer a draft is still a 409 that changes nothing (archive
// included), a wrong type is a 422, and another account's campaign is a 404.
func TestArchiveSwitchAfterSending(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	res := e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "dec", "from_email": "news@example.com",
		"subject": "Dec", "html_template": `<p>Hello {{if .Archive}}reader{{else}}{{.Name}}{{end}}</p>`})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	camp := decodeAs[api.Campaign](t, res)
	require.False(t, camp.Archive)
	id := itoa(camp.Id)
	require.Equal(t, http.StatusOK, e.do(e.keyA, "POST", "/v1/campaigns/"+id+"/approve", nil).Status)
	_, err := e.pool.Exec(ctx, `UPDATE campaigns SET status = 'sent', started_at = now() - interval '1 hour', finished_at = now() WHERE id = $1`, camp.Id)
	require.NoError(t, err)
	var public string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT a.public_id FROM accounts a JOIN campaigns c ON c.account_id = a.id WHERE c.id = $1`, camp.Id).Scan(&public))
	page := "/archive/" + public + "/" + id
	require.Equal(t, http.StatusNotFound, e.do("", "GET", page, nil).Status, "not published")

	res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"archive": true})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	got := decodeAs[api.Campaign](t, res)
	require.True(t, got.Archive)
	require.Equal(t, api.CampaignStatus("sent"), got.Status)
	res = e.do("", "GET", page, nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Contains(t, string(res.Body), "Hello reader")

	// Anything else with it: 409, and archive is not changed either.
	for _, body := range []map[string]any{
		{"archive": false, "name": "renamed"},
		{"archive": false, "track_opens": true},
		{"subject": "changed"},
	} {
		res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, body)
		require.Equal(t, http.StatusConflict, res.Status, "%v: %s", body, res.Body)
	}
	res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"archive": "yes"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Equal(t, http.StatusNotFound, e.do(e.keyB, "PATCH", "/v1/campaigns/"+id, map[string]any{"archive": false}).Status)
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+id, nil)
	got = decodeAs[api.Campaign](t, res)
	require.True(t, got.Archive)
	require.Equal(t, "dec", got.Name)
	require.Equal(t, http.StatusOK, e.do("", "GET", page, nil).Status)

	// Withdrawn.
	res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"archive": false})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.False(t, decodeAs[api.Campaign](t, res).Archive)
	require.Equal(t, http.StatusNotFound, e.do("", "GET", page, nil).Status)
}
