package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	campaignsvc "github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// retentionFixture has one account with 30 subscribers and four campaigns: sent
// ten days ago, sent an hour ago, still sending, and cancelled ten days ago with
// one lease still out. Each campaign's rows cycle through the statuses given.
func retentionFixture(t *testing.T, clk *heldClock) (f fixture, old, recent, sending, cancelled int64) {
	pool := dbtest.New(t)
	f = fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "s", 30, "confirmed")
	mk := func(status string, ended time.Time, statuses []string) int64 {
		id := f.campaign(acct, nil, "skip", clk.Now().Add(-30*24*time.Hour))
		f.exec(`UPDATE campaigns SET status = $2::text,
			finished_at = CASE WHEN $2::text = 'sent' THEN $3::timestamptz END,
			cancelled_at = CASE WHEN $2::text = 'cancelled' THEN $3::timestamptz END WHERE id = $1`, id, status, ended)
		lease := ended.Add(time.Hour)
		testfactory.New(pool).Sends(t, acct, id, testfactory.Sends{Statuses: statuses, LeaseUntil: &lease})
		// The kept counters, as the statements that settle rows write them (/stats reads them).
		f.exec(`INSERT INTO campaign_counts (campaign_id, account_id, domain, sent)
			SELECT campaign_id, account_id, split_part(email_lower, '@', 2), count(*) FROM sends
			WHERE campaign_id = $1 AND status = 'sent' GROUP BY 1, 2, 3`, id)
		f.exec(`INSERT INTO campaign_status_counts (campaign_id, account_id, status, n)
			SELECT campaign_id, account_id, status, count(*) FROM sends
			WHERE campaign_id = $1 AND status IN ('failed', 'unknown', 'suppressed', 'cancelled') GROUP BY 1, 2, 3`, id)
		return id
	}
	settled := []string{"sent", "sent", "failed", "suppressed", "unknown"}
	old = mk("sent", clk.Now().Add(-10*24*time.Hour), settled)
	recent = mk("sent", clk.Now().Add(-time.Hour), settled)
	sending = mk("sending", time.Time{}, []string{"sent", "queued", "sending"})
	cancelled = mk("cancelled", clk.Now().Add(-10*24*time.Hour), append(make([]string, 0, 30),
		"sending", "cancelled", "cancelled", "sent", "sent", "sent", "sent", "sent", "sent", "sent",
		"sent", "sent", "sent", "sent", "sent", "sent", "sent", "sent", "sent", "sent",
		"sent", "sent", "sent", "sent", "sent", "sent", "sent", "sent", "sent", "sent"))
	return f, old, recent, sending, cancelled
}

// retainer is an executor for the retention tests. It is built without
// newExecutor's end-of-test delivery check: the fixture writes its rows' outcomes
// directly (nothing was delivered through a provider) and leaves a lease out on
// a cancelled campaign on purpose.
func retainer(t *testing.T, f fixture, cfg Config) *Executor {
	t.Helper()
	e, err := New(f.pool, newFake(true), cfg, nil, nil)
	require.NoError(t, err)
	return e
}

func (f fixture) live(campaign int64) int64 {
	return f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1`, campaign)
}

// TestRetentionDeletesSettledRowsOfOldCampaignsAndKeepsTheirCounts: with a 7-day
// retention, the rows of the campaigns that ended ten days ago go, in batches, and
// their stats stay exactly what they were; a recent or running campaign and a
// cancelled campaign's row still in flight are left alone.
func TestRetentionDeletesSettledRowsOfOldCampaignsAndKeepsTheirCounts(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, old, recent, sending, cancelled := retentionFixture(t, clk)
	before := map[int64]map[string]int{}
	for _, c := range []int64{old, recent, sending, cancelled} {
		before[c] = f.counts(c)
	}
	require.Equal(t, map[string]int{"sent": 12, "failed": 6, "suppressed": 6, "unknown": 6}, before[old])

	e := retainer(t, f, Config{Now: clk.Now, SendRetention: 7 * 24 * time.Hour})
	e.retainBatch = 7 // 30 and 29 rows: several statements per campaign
	n, err := e.retain(context.Background())
	require.NoError(t, err)
	require.EqualValues(t, 30+29, n)
	require.Zero(t, f.live(old))
	require.EqualValues(t, 1, f.live(cancelled), "the row still in flight stays")
	require.EqualValues(t, 30, f.live(recent))
	require.EqualValues(t, 30, f.live(sending))
	for _, c := range []int64{old, recent, sending, cancelled} {
		require.Equal(t, before[c], f.counts(c), "campaign %d", c)
	}
	// The stats API reads the same totals.
	acct := f.int64(`SELECT account_id FROM campaigns WHERE id = $1`, old)
	st, err := campaignsvc.NewService(f.pool).Stats(context.Background(), acct, old)
	require.NoError(t, err)
	require.EqualValues(t, 30, st.Total)
	require.EqualValues(t, 12, st.Counts["sent"])

	// Nothing more until the next look a minute later; then the in-flight row,
	// once settled, goes too.
	f.exec(`UPDATE sends SET status = 'sent', lease_until = NULL WHERE campaign_id = $1`, cancelled)
	n, err = e.retain(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
	clk.Add(retentionEvery)
	n, err = e.retain(context.Background())
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.Equal(t, map[string]int{"sent": 28, "cancelled": 2}, f.counts(cancelled))

	// Past the retention, the recent campaign goes as well.
	clk.Add(7 * 24 * time.Hour)
	n, err = e.retain(context.Background())
	require.NoError(t, err)
	require.EqualValues(t, 30, n)
	require.Equal(t, before[recent], f.counts(recent))
}

// TestRetentionStatementCountsWhatItDeletes: each statement deletes at most its
// batch and moves exactly those rows into the archived counts, so the totals are
// right between statements too; the archive is per account.
func TestRetentionStatementCountsWhatItDeletes(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, old, _, _, _ := retentionFixture(t, clk)
	want := f.counts(old)
	q := store.New(f.pool)
	for left := int64(30); left > 0; left -= min(left, 4) {
		n, err := q.SendDeleteRetired(context.Background(), store.SendDeleteRetiredParams{CampaignID: old, N: 4})
		require.NoError(t, err)
		require.Equal(t, min(left, 4), n)
		require.Equal(t, left-n, f.live(old))
		require.Equal(t, want, f.counts(old))
	}
	other := f.account("other")
	c, err := q.CampaignSendCounts(context.Background(), store.CampaignSendCountsParams{AccountID: other, CampaignID: old})
	require.NoError(t, err)
	require.Equal(t, store.CampaignSendCountsRow{}, c, "another tenant's id counts nothing")
}

// TestNoRetentionKeepsEveryRow: the default (0) deletes nothing, however old.
func TestNoRetentionKeepsEveryRow(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, old, _, _, cancelled := retentionFixture(t, clk)
	e := retainer(t, f, Config{Now: clk.Now})
	clk.Add(365 * 24 * time.Hour)
	require.NoError(t, e.maintainOnce(context.Background()))
	require.EqualValues(t, 30, f.live(old))
	require.EqualValues(t, 30, f.live(cancelled))
}
