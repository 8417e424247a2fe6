package segment_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/segment"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// captured is a store.DBTX that keeps the statement a query would run, with its
// arguments, and runs nothing: the test explains exactly what the preview sends.
type captured struct {
	sql  string
	args []any
}

func (c *captured) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, nil
}

func (c *captured) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	c.sql, c.args = sql, args
	return nil, errors.New("captured")
}

func (c *captured) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	c.sql, c.args = sql, args
	return capturedRow{}
}

func (c *captured) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	return 0, nil
}

type capturedRow struct{}

func (capturedRow) Scan(...any) error { return nil }

// TestEngagementPlansAtScale: 100,000 subscribers, a campaign sent to each of them
// (100,000 sends), 30,000 of them opened by a person and 20,000 more by a scanner
// only: the preview count of each engagement form is exact, runs inside the
// default segment time limit, and its plan reads the hits and sends once (a hashed
// subplan or a join), never once per subscriber. go test -v shows the plans and
// the times.
func TestEngagementPlansAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 100,000 subscribers")
	}
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	const n = 100_000
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := f.pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	x := f.make.Campaign(t, f.acct, testfactory.Campaign{Name: "x"})
	f.make.Subscribers(t, f.acct, "p", n, "confirmed")
	sentAt := time.Now().Add(-3 * 24 * time.Hour)
	f.make.Sends(t, f.acct, x, testfactory.Sends{Statuses: []string{"sent"}, SentAt: &sentAt})
	// Sends whose id ends in 0-2 are opened by a person, 3-4 by a scanner only.
	exec(`INSERT INTO tracking_hits (account_id, campaign_id, send_id, kind, link_idx, occurred_at, method, suspected_bot)
		SELECT account_id, campaign_id, id, 'open', 0, now() - interval '1 day', 'GET', (id % 10) >= 3
		FROM sends WHERE campaign_id = $1 AND id % 10 < 5`, x)
	exec(`ANALYZE subscribers, sends, tracking_hits`)

	forms := []struct {
		name string
		e    segment.Engagement
		want int64
	}{
		{"opened x by people", segment.Engagement{Kind: "opened", CampaignID: &x, PeopleOnly: true}, 30_000},
		{"not opened x by people", segment.Engagement{Kind: "opened", Negated: true, CampaignID: &x, PeopleOnly: true}, 70_000},
		{"opened within 30 days", segment.Engagement{Kind: "opened", Days: ptr[int32](30)}, 50_000},
		{"not opened within 30 days by people", segment.Engagement{Kind: "opened", Negated: true, Days: ptr[int32](30), PeopleOnly: true}, 70_000},
	}
	for _, form := range forms {
		kind, negated, campaignID, days, people := form.e.Params()
		var c captured
		_, err := store.New(&c).SegmentPreviewCount(ctx, store.SegmentPreviewCountParams{AccountID: f.acct,
			SegmentStatuses: []string{}, SegmentListIds: []int64{}, SegmentEngaged: kind, SegmentEngagedNegated: negated,
			SegmentEngagedCampaignID: campaignID, SegmentEngagedDays: days, SegmentEngagedPeopleOnly: people,
			Bound: math.MaxInt32}) // the preview's: no bound
		require.NoError(t, err)
		require.Contains(t, c.sql, "tracking_hits", "the preview count's statement")

		start := time.Now()
		count, _, err := f.svc.Preview(ctx, f.acct, segment.Filter{Engagement: &form.e}, 10)
		took := time.Since(start)
		require.NoError(t, err, form.name)
		require.Equal(t, form.want, count, form.name)
		// The preview ran under the Service's statement time limit (DefaultTimeout):
		// past it, Preview answers a 422, not a count.

		tx, err := f.pool.Begin(ctx)
		require.NoError(t, err)
		require.NoError(t, segment.Bound(ctx, store.New(tx), segment.DefaultTimeout))
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) "+c.sql, c.args...)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			plan = append(plan, line)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, tx.Rollback(ctx))
		text := strings.Join(plan, "\n")
		t.Logf("%s: %d in %s\n%s", form.name, count, took, text)
		t.Logf("%s, one build window:\n%s", form.name, strings.Join(buildWindowPlan(t, f, form.e), "\n"))
		// A subplan run per subscriber shows "loops=100000" on the sends or hits
		// it reads; hashed or joined, they are read once.
		for _, line := range plan {
			if strings.Contains(line, "sends") || strings.Contains(line, "tracking_hits") {
				require.NotContains(t, line, "loops=100000", "%s: read once per subscriber:\n%s", form.name, text)
			}
		}
	}
}

// buildWindowPlan explains the campaign build's audience query (CampaignAudiencePage)
// over one window of 1,000 subscribers with engagement e: logged, as each window
// hashes the campaign's sends and hits again (a cost that grows with windows × sends).
func buildWindowPlan(t *testing.T, f fixture, e segment.Engagement) []string {
	t.Helper()
	ctx := context.Background()
	kind, negated, campaignID, days, people := e.Params()
	first := f.int64(`SELECT min(id) FROM subscribers WHERE account_id = $1`, f.acct)
	var c captured
	_, err := store.New(&c).CampaignAudiencePage(ctx, store.CampaignAudiencePageParams{AccountID: f.acct,
		AfterID: first + 50_000, UptoID: first + 51_000, ListIds: []int64{}, SegmentStatuses: []string{}, SegmentListIds: []int64{},
		SegmentEngaged: kind, SegmentEngagedNegated: negated, SegmentEngagedCampaignID: campaignID,
		SegmentEngagedDays: days, SegmentEngagedPeopleOnly: people})
	require.Error(t, err) // captured: nothing ran
	rows, err := f.pool.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) "+c.sql, c.args...)
	require.NoError(t, err)
	var plan []string
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		plan = append(plan, line)
	}
	require.NoError(t, rows.Err())
	return plan
}
