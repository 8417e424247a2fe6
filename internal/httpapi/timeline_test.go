package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestCampaignTimeline: the timeline counts a campaign's settled sends by when they
// settled, oldest first, in buckets whose total is the settled count (queued rows
// are not on it); a long campaign is at most 200 buckets; before anything settles
// it is empty; another account's campaign is a 404.
func TestCampaignTimeline(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	cB := sendingCampaignWith(t, e, e.keyB, 3)
	c := sendingCampaignWith(t, e, e.keyA, 30) // every third sent (10), the rest queued
	get := func(key string, id int64) response {
		return e.do(key, http.MethodGet, fmt.Sprintf("/v1/campaigns/%d/timeline", id), nil)
	}
	// Spread the 10 sent rows over 10 minutes, one a minute; fail one queued row.
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	_, err := e.pool.Exec(ctx, `UPDATE sends SET sent_at = $2::timestamptz + (subscriber_id / 3) * interval '1 minute'
		WHERE campaign_id = $1 AND status = 'sent'`, c, t0)
	require.NoError(t, err)
	_, err = e.pool.Exec(ctx, `UPDATE sends SET status = 'failed', updated_at = $2 WHERE id = (SELECT min(id) FROM sends WHERE campaign_id = $1 AND status = 'queued')`, c, t0.Add(5*time.Minute))
	require.NoError(t, err)

	res := get(e.keyA, c)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	tl := decodeAs[api.CampaignTimeline](t, res)
	require.Equal(t, c, tl.CampaignId)
	require.NotEmpty(t, tl.Points)
	var sent, failed int64
	for i, p := range tl.Points {
		sent += p.Sent
		failed += p.Failed
		if i > 0 {
			require.True(t, p.At.After(tl.Points[i-1].At), "oldest first")
			require.Zero(t, p.At.Sub(tl.Points[0].At).Seconds()-float64(int64(p.At.Sub(tl.Points[0].At).Seconds())/tl.StepSeconds*tl.StepSeconds), "on the step")
		}
	}
	require.EqualValues(t, 10, sent)
	require.EqualValues(t, 1, failed)
	require.LessOrEqual(t, len(tl.Points), 200)
	require.GreaterOrEqual(t, tl.StepSeconds*200, int64(9*60), "200 buckets span the campaign")
	var first time.Time
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT min(sent_at) FROM sends WHERE campaign_id = $1`, c).Scan(&first))
	require.True(t, tl.Points[0].At.Equal(first), "starts at the first settled send: %v, not %v", tl.Points[0].At, first)

	// A month-long tail still fits in 200 buckets.
	_, err = e.pool.Exec(ctx, `UPDATE sends SET sent_at = $2 WHERE id = (SELECT max(id) FROM sends WHERE campaign_id = $1 AND status = 'sent')`, c, t0.Add(30*24*time.Hour))
	require.NoError(t, err)
	tl = decodeAs[api.CampaignTimeline](t, get(e.keyA, c))
	require.LessOrEqual(t, len(tl.Points), 200)
	require.GreaterOrEqual(t, tl.StepSeconds, int64(30*24*3600/200))

	// Nothing settled yet: no point, step 0.
	_, err = e.pool.Exec(ctx, `UPDATE sends SET status = 'queued', sent_at = NULL WHERE campaign_id = $1`, cB)
	require.NoError(t, err)
	tl = decodeAs[api.CampaignTimeline](t, get(e.keyB, cB))
	require.Empty(t, tl.Points)
	require.Zero(t, tl.StepSeconds)

	require.Equal(t, http.StatusNotFound, get(e.keyA, cB).Status, "another account's campaign")
	require.Equal(t, http.StatusNotFound, get(e.keyB, c).Status)
	require.Equal(t, http.StatusUnprocessableEntity, e.do(e.keyA, http.MethodGet, "/v1/campaigns/x/timeline", nil).Status)
}

// TestCampaignEvents: a campaign's page lists its own lifecycle events, newest
// first, never another campaign's or another account's; another account's
// campaign is a 404; the look-up goes through events_campaign_idx, not the
// account's per-recipient events.
func TestCampaignEvents(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	cB := sendingCampaignWith(t, e, e.keyB, 2)
	other := sendingCampaignWith(t, e, e.keyA, 2)
	c := sendingCampaignWith(t, e, e.keyA, 2)
	for _, step := range []struct {
		key string
		id  int64
		act string
	}{{e.keyA, c, "pause"}, {e.keyB, cB, "pause"}, {e.keyA, other, "pause"}, {e.keyA, c, "resume"}} {
		require.Equal(t, http.StatusOK, e.do(step.key, http.MethodPost, fmt.Sprintf("/v1/campaigns/%d/%s", step.id, step.act), nil).Status)
	}
	res := e.do(e.keyA, http.MethodGet, fmt.Sprintf("/v1/campaigns/%d/events", c), nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var types []string
	for _, ev := range decodeAs[api.CampaignEventList](t, res).Data {
		types = append(types, string(ev.Type))
		require.EqualValues(t, c, ev.Data["campaign_id"])
	}
	require.Equal(t, []string{"campaign.resumed", "campaign.paused"}, types)
	require.Equal(t, http.StatusNotFound, e.do(e.keyA, http.MethodGet, fmt.Sprintf("/v1/campaigns/%d/events", cB), nil).Status)
	require.Equal(t, http.StatusNotFound, e.do(e.keyB, http.MethodGet, fmt.Sprintf("/v1/campaigns/%d/events", c), nil).Status)

	// Many per-recipient events of the account: the plan still reads the index.
	testfactory.New(e.pool).Events(t, accountOf(t, e, e.keyA), "send.sent", 20000,
		json.RawMessage(fmt.Sprintf(`{"campaign_id": %d}`, c)), "send_id")
	_, err := e.pool.Exec(ctx, `ANALYZE events`)
	require.NoError(t, err)
	var plan []string
	rows, err := e.pool.Query(ctx, `EXPLAIN SELECT id, type, occurred_at, data FROM events
		WHERE account_id = (SELECT account_id FROM campaigns WHERE id = $1) AND type LIKE 'campaign.%'
		  AND data ->> 'campaign_id' = $1::bigint::text ORDER BY id DESC LIMIT 100`, c)
	require.NoError(t, err)
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		plan = append(plan, line)
	}
	require.Contains(t, fmt.Sprint(plan), "events_campaign_idx", "%v", plan)
}
