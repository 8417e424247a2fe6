package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/testfactory"
)

func createCampaign(t *testing.T, e *env, extra map[string]any) api.Campaign {
	t.Helper()
	body := map[string]any{"name": "launch", "subject": "Hello {{.Name}}", "from_email": "News@Example.com",
		"html_template": "<p>Hi {{.Name}}</p>", "text_template": "Hi {{.Name}}"}
	for k, v := range extra {
		body[k] = v
	}
	res := e.do(e.keyA, "POST", "/v1/campaigns", body)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	return decodeAs[api.Campaign](t, res)
}

func TestCampaignDraftLifecycle(t *testing.T) {
	t.Parallel()
	e := setup(t)
	c := createCampaign(t, e, nil)
	require.Equal(t, api.CampaignStatus("draft"), c.Status)
	require.Equal(t, "News@example.com", c.FromEmail)
	require.Equal(t, api.AmbiguousPolicy("skip"), c.AmbiguousPolicy)
	require.Empty(t, c.ListIds)
	id := itoa(c.Id)

	res := e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"text_template": "{{.Nope"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/text_template"}, decodeAs[problem](t, res).pointers())
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+id, nil)
	require.Equal(t, "Hi {{.Name}}", decodeAs[api.Campaign](t, res).TextTemplate, "a refused edit changes nothing")

	res = e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "x", "subject": "x", "from_email": "a@example.com", "list_ids": []int64{999}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/list_ids/0"}, decodeAs[problem](t, res).pointers())

	res = e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "x", "subject": "{{if}}", "from_email": "a@example.com"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/subject"}, decodeAs[problem](t, res).pointers())

	res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"name": "renamed", "ambiguous_policy": "retry"})
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, "renamed", decodeAs[api.Campaign](t, res).Name)

	res = e.do(e.keyA, "GET", "/v1/campaigns?status=draft", nil)
	require.Len(t, decodeAs[api.CampaignPage](t, res).Data, 1)

	res = e.do(e.keyA, "DELETE", "/v1/campaigns/"+id, nil)
	require.Equal(t, http.StatusNoContent, res.Status)
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+id, nil)
	require.Equal(t, http.StatusNotFound, res.Status)
}

func TestCampaignTransitions(t *testing.T) {
	t.Parallel()
	e := setup(t)
	c := createCampaign(t, e, nil)
	id := itoa(c.Id)
	ctx := context.Background()

	// Approval notifies the executors on sendonce_campaigns, on commit.
	conn, err := e.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "LISTEN "+postgres.CampaignChannel)
	require.NoError(t, err)

	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	res := e.do(e.keyA, "POST", "/v1/campaigns/"+id+"/approve", map[string]any{"scheduled_for": at})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	got := decodeAs[api.Campaign](t, res)
	require.Equal(t, api.CampaignStatus("approved"), got.Status)
	require.True(t, at.Equal(*got.ScheduledFor))
	require.NotNil(t, got.ApprovedAt)
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := conn.Conn().WaitForNotification(wait)
	require.NoError(t, err)
	require.Equal(t, id, n.Payload)

	// Wrong state: 409 with the current state; edits and deletes only while draft.
	for _, path := range []string{"/approve", "/pause", "/resume"} {
		res = e.do(e.keyA, "POST", "/v1/campaigns/"+id+path, nil)
		require.Equal(t, http.StatusConflict, res.Status, path)
		require.Equal(t, "approved", decodeAs[problem](t, res).CurrentStatus, path)
	}
	res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"name": "late"})
	require.Equal(t, http.StatusConflict, res.Status)
	res = e.do(e.keyA, "DELETE", "/v1/campaigns/"+id, nil)
	require.Equal(t, http.StatusConflict, res.Status)

	res = e.do(e.keyA, "POST", "/v1/campaigns/"+id+"/unapprove", nil)
	require.Equal(t, http.StatusOK, res.Status)
	got = decodeAs[api.Campaign](t, res)
	require.Equal(t, api.CampaignStatus("draft"), got.Status)
	require.Nil(t, got.ScheduledFor)

	// Approve with no body starts now.
	res = e.do(e.keyA, "POST", "/v1/campaigns/"+id+"/approve", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

	// The executor's move to sending, done here by hand, then pause/resume/cancel.
	_, err = e.pool.Exec(ctx, `UPDATE campaigns SET status = 'sending', started_at = now() WHERE id = $1`, c.Id)
	require.NoError(t, err)
	var acct int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT account_id FROM campaigns WHERE id = $1`, c.Id).Scan(&acct))
	fx := testfactory.New(e.pool)
	subID := fx.Subscriber(t, acct, testfactory.Subscriber{Email: "r@example.com", Status: "confirmed"})
	now := time.Now()
	fx.Send(t, acct, c.Id, subID, testfactory.Send{Email: "r@example.com", Status: "sent", SentAt: &now})
	// Its kept counter, as the acknowledgement (SendAckMany) writes it: /stats reads the counters.
	_, err = e.pool.Exec(ctx, `INSERT INTO campaign_counts (campaign_id, account_id, domain, sent)
		SELECT id, account_id, 'example.com', 1 FROM campaigns WHERE id = $1`, c.Id)
	require.NoError(t, err)
	for g := int64(1000); g <= 1002; g++ {
		fx.Send(t, acct, c.Id, g, testfactory.Send{Email: fmt.Sprintf("q%d@example.com", g)})
	}

	res = e.do(e.keyA, "POST", "/v1/campaigns/"+id+"/pause", nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, api.CampaignStatus("paused"), decodeAs[api.Campaign](t, res).Status)
	res = e.do(e.keyA, "POST", "/v1/campaigns/"+id+"/resume", nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, api.CampaignStatus("sending"), decodeAs[api.Campaign](t, res).Status)

	res = e.do(e.keyA, "GET", "/v1/campaigns/"+id+"/stats", nil)
	require.Equal(t, http.StatusOK, res.Status)
	st := decodeAs[api.CampaignStats](t, res)
	require.Equal(t, api.SendCounts{Queued: 3, Sent: 1}, st.Counts)
	require.EqualValues(t, 4, st.Total)
	require.NotNil(t, st.StartedAt)
	require.Nil(t, st.Skipped, "built by hand here, so the build recorded no skips")
	require.Contains(t, string(res.Body), `"skipped":null`)
	_, err = e.pool.Exec(ctx, `UPDATE campaigns SET skipped_suppressed = 2, skipped_unconfirmed = 5 WHERE id = $1`, c.Id)
	require.NoError(t, err)
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+id+"/stats", nil)
	require.Equal(t, &api.BuildSkips{Suppressed: 2, Unconfirmed: 5}, decodeAs[api.CampaignStats](t, res).Skipped)

	res = e.do(e.keyA, "POST", "/v1/campaigns/"+id+"/cancel", nil)
	require.Equal(t, http.StatusOK, res.Status)
	got = decodeAs[api.Campaign](t, res)
	require.Equal(t, api.CampaignStatus("cancelled"), got.Status)
	require.NotNil(t, got.CancelledAt)
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+id+"/stats", nil)
	require.Equal(t, api.SendCounts{Cancelled: 3, Sent: 1}, decodeAs[api.CampaignStats](t, res).Counts)
	res = e.do(e.keyA, "POST", "/v1/campaigns/"+id+"/cancel", nil)
	require.Equal(t, http.StatusConflict, res.Status)
	require.Equal(t, "cancelled", decodeAs[problem](t, res).CurrentStatus)

	// Per-recipient sends, paged and filtered.
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+id+"/sends?limit=2", nil)
	page := decodeAs[api.SendPage](t, res)
	require.Len(t, page.Data, 2)
	require.NotNil(t, page.NextCursor)
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+id+"/sends?limit=2&cursor="+*page.NextCursor, nil)
	page = decodeAs[api.SendPage](t, res)
	require.Len(t, page.Data, 2)
	require.Nil(t, page.NextCursor)
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+id+"/sends?status=sent", nil)
	page = decodeAs[api.SendPage](t, res)
	require.Len(t, page.Data, 1)
	require.Equal(t, "r@example.com", page.Data[0].Email)
	require.NotNil(t, page.Data[0].SentAt)
	// A cursor of another listing is refused.
	res = e.do(e.keyA, "GET", "/v1/subscribers?cursor="+*decodeAs[api.SendPage](t, e.do(e.keyA, "GET", "/v1/campaigns/"+id+"/sends?limit=1", nil)).NextCursor, nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
}

func TestCampaignApproveNeedsBody(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "x", "subject": "x", "from_email": "a@example.com"})
	require.Equal(t, http.StatusCreated, res.Status)
	c := decodeAs[api.Campaign](t, res)
	res = e.do(e.keyA, "POST", "/v1/campaigns/"+itoa(c.Id)+"/approve", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+itoa(c.Id), nil)
	require.Equal(t, api.CampaignStatus("draft"), decodeAs[api.Campaign](t, res).Status, "a refused approval rolls back")
}
