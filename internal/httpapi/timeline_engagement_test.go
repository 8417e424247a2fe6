package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestCampaignTimelineEngagement: the timeline carries the campaign's opens and
// clicks by people (a scanner's hits and the honeypot link left out) when they
// came, and its recipients' final feedback — bounces hard and soft, complaints,
// unsubscribes — at its time, beside the settled sends; another campaign's hits
// and feedback are not on it.
func TestCampaignTimelineEngagement(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	c := sendingCampaignWith(t, e, e.keyA, 15) // 5 sent
	other := sendingCampaignWith(t, e, e.keyA, 3)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := e.pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	exec(`UPDATE sends SET sent_at = $1 WHERE status = 'sent'`, t0)
	hit := func(campaign int64, kind string, link int, bot bool, at time.Duration) {
		exec(`INSERT INTO tracking_hits (account_id, campaign_id, send_id, kind, link_idx, occurred_at, method, suspected_bot)
			SELECT account_id, campaign_id, min(id), $2, $3, $4, 'GET', $5 FROM sends WHERE campaign_id = $1 AND status = 'sent'
			GROUP BY 1, 2`, campaign, kind, link, t0.Add(at), bot)
	}
	hit(c, "open", 0, false, time.Hour)
	hit(c, "open", 0, false, 2*time.Hour)
	hit(c, "open", 0, true, 2*time.Hour) // a scanner
	hit(c, "click", 1, false, 3*time.Hour)
	hit(c, "click", 0, false, 3*time.Hour) // the honeypot
	hit(other, "open", 0, false, time.Hour)
	feedback := func(campaign int64, nth int, kind string, at time.Duration) {
		exec(`UPDATE sends SET feedback = $3, feedback_at = $4 WHERE id = (SELECT id FROM sends WHERE campaign_id = $1
			AND status = 'sent' ORDER BY id OFFSET $2 LIMIT 1)`, campaign, nth, kind, t0.Add(at))
	}
	feedback(c, 0, "hard_bounce", 4*time.Hour)
	feedback(c, 1, "soft_bounce", 4*time.Hour)
	feedback(c, 2, "complaint", 5*time.Hour)
	feedback(c, 3, "unsubscribe", 6*time.Hour)
	feedback(other, 0, "complaint", 5*time.Hour)

	res := e.do(e.keyA, http.MethodGet, fmt.Sprintf("/v1/campaigns/%d/timeline", c), nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	tl := decodeAs[api.CampaignTimeline](t, res)
	var sum api.CampaignTimelinePoint
	var opensAt []time.Time
	for _, p := range tl.Points {
		sum.Sent += p.Sent
		sum.OpensPeople += p.OpensPeople
		sum.ClicksPeople += p.ClicksPeople
		sum.HardBounces += p.HardBounces
		sum.SoftBounces += p.SoftBounces
		sum.Complaints += p.Complaints
		sum.Unsubscribes += p.Unsubscribes
		if p.OpensPeople > 0 {
			opensAt = append(opensAt, p.At)
		}
	}
	require.Equal(t, api.CampaignTimelinePoint{Sent: 5, OpensPeople: 2, ClicksPeople: 1, HardBounces: 1, SoftBounces: 1,
		Complaints: 1, Unsubscribes: 1}, sum)
	require.Len(t, opensAt, 2, "the opens in the buckets of their hours")
	require.True(t, tl.Points[0].At.Equal(t0), "from the first event")
	require.GreaterOrEqual(t, tl.StepSeconds*200, int64(6*3600), "the buckets span the feedback too")
}
