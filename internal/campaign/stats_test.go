package campaign_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// clock is a settable time for the stats cache.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// addSends inserts n send rows of the given status straight into the table: the
// test is about counting them, not about how the executor makes them.
func addSends(t *testing.T, pool *pgxpool.Pool, accountID, campaignID int64, n int, status string) {
	t.Helper()
	for i := 0; i < n; i++ {
		job := strconv.FormatInt(campaignID, 10) + "-" + status + "-" + strconv.Itoa(i) + "-" + time.Now().Format(time.RFC3339Nano)
		_, err := pool.Exec(context.Background(), `INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status)
			VALUES ($1, $2, nextval(pg_get_serial_sequence('subscribers', 'id')), 'x@example.com', 'x@example.com', $3, $4)`,
			campaignID, accountID, job, status)
		require.NoError(t, err)
	}
	keep(t, pool, accountID, campaignID, n, status)
}

// keep adds n rows of status to the campaign's kept counters, as the statement
// that settles a row does in its transaction (SendAckMany for sent, the status
// counters for failed, unknown, suppressed and cancelled); queued and sending are
// counted from the rows.
func keep(t *testing.T, pool *pgxpool.Pool, accountID, campaignID int64, n int, status string) {
	t.Helper()
	var err error
	switch status {
	case "sent":
		_, err = pool.Exec(context.Background(), `INSERT INTO campaign_counts (campaign_id, account_id, domain, sent) VALUES ($1, $2, 'example.com', $3)
			ON CONFLICT (campaign_id, domain) DO UPDATE SET sent = campaign_counts.sent + EXCLUDED.sent`, campaignID, accountID, n)
	case "failed", "unknown", "suppressed", "cancelled":
		_, err = pool.Exec(context.Background(), `INSERT INTO campaign_status_counts (campaign_id, account_id, status, n) VALUES ($1, $2, $3, $4)
			ON CONFLICT (campaign_id, status) DO UPDATE SET n = campaign_status_counts.n + EXCLUDED.n`, campaignID, accountID, status, n)
	}
	require.NoError(t, err)
}

// TestStatsCache: counts are served from the cache for less than StatsTTL, are
// recounted once it has passed, and another account never gets a cached entry.
func TestStatsCache(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	accA, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	accB, _, err := account.NewService(pool).Create(ctx, "b")
	require.NoError(t, err)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := campaign.NewServiceClock(pool, clk.now)

	ca := draft(t, s, accA.ID, ctx)
	cb := draft(t, s, accB.ID, ctx)
	addSends(t, pool, accA.ID, ca.ID, 3, "queued")
	addSends(t, pool, accB.ID, cb.ID, 1, "sent")

	st, err := s.Stats(ctx, accA.ID, ca.ID)
	require.NoError(t, err)
	require.Equal(t, int64(3), st.Counts["queued"])
	require.Equal(t, int64(3), st.Total)
	// A caller editing its map must not change what the next caller gets.
	st.Counts["queued"] = 99

	// New rows inside the TTL are not seen yet: the counts are at most StatsTTL old.
	addSends(t, pool, accA.ID, ca.ID, 2, "sent")
	clk.add(campaign.StatsTTL - time.Millisecond)
	st, err = s.Stats(ctx, accA.ID, ca.ID)
	require.NoError(t, err)
	require.Equal(t, int64(3), st.Counts["queued"])
	require.Equal(t, int64(0), st.Counts["sent"])

	// Another account asking for A's campaign gets 404, cached entry or not.
	_, err = s.Stats(ctx, accB.ID, ca.ID)
	require.True(t, apperr.Is(err, apperr.NotFound), "got %v", err)
	// And its own campaign's counts are its own.
	st, err = s.Stats(ctx, accB.ID, cb.ID)
	require.NoError(t, err)
	require.Equal(t, int64(1), st.Counts["sent"])
	require.Equal(t, int64(0), st.Counts["queued"])
	require.Equal(t, int64(1), st.Total)

	// Once StatsTTL has passed, the counts are current.
	clk.add(time.Millisecond)
	st, err = s.Stats(ctx, accA.ID, ca.ID)
	require.NoError(t, err)
	require.Equal(t, int64(3), st.Counts["queued"])
	require.Equal(t, int64(2), st.Counts["sent"])
	require.Equal(t, int64(5), st.Total)
}

// TestStatsConcurrent: many concurrent requests for one campaign all get the
// right counts (they share one query through the cache).
func TestStatsConcurrent(t *testing.T) {
	t.Parallel()
	s, acc, ctx := setup(t)
	c := draft(t, s, acc, ctx)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := s.Stats(ctx, acc, c.ID)
			if err == nil && st.Total != 0 {
				err = fmt.Errorf("total %d, want 0", st.Total)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestStatsRefreshAhead: past half the TTL a request still gets the cached counts
// at once, and starts a recount in the background that soon makes them current,
// with the clock never reaching the TTL.
func TestStatsRefreshAhead(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := campaign.NewServiceClock(pool, clk.now)
	refreshed := campaign.StatsRefreshed(s)
	refreshed.Init()
	c := draft(t, s, acc.ID, ctx)

	st, err := s.Stats(ctx, acc.ID, c.ID)
	require.NoError(t, err)
	require.Equal(t, int64(0), st.Total)
	addSends(t, pool, acc.ID, c.ID, 2, "sent")

	clk.add(campaign.StatsTTL / 2)
	st, err = s.Stats(ctx, acc.ID, c.ID)
	require.NoError(t, err)
	require.Equal(t, int64(0), st.Total, "the cached counts, not a wait for a recount")
	// The recount runs on its own goroutine: wait for it to end.
	refreshed.WaitFor(t, func(id int64) bool { return id == c.ID })
	st, err = s.Stats(ctx, acc.ID, c.ID)
	require.NoError(t, err)
	require.Equal(t, int64(2), st.Total)
}

// TestStatsFinalStatusFinalCounts: an executor in another process finishes the
// campaign (nothing in this process hears of it) right after a dashboard polled its
// stats. The next answer that says "sent" must carry the final counts, not the
// cached queued and sending rows of a moment before, however young that cache is.
func TestStatsFinalStatusFinalCounts(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := campaign.NewServiceClock(pool, clk.now)
	for _, final := range []string{"sent", "cancelled"} {
		c := draft(t, s, acc.ID, ctx)
		_, err := pool.Exec(ctx, `UPDATE campaigns SET status = 'sending', started_at = now() WHERE id = $1`, c.ID)
		require.NoError(t, err)
		addSends(t, pool, acc.ID, c.ID, 5, "queued")
		_, err = pool.Exec(ctx, `UPDATE sends SET status = 'sending', lease_until = now() + interval '1 minute'
			WHERE id IN (SELECT id FROM sends WHERE campaign_id = $1 ORDER BY id LIMIT 2)`, c.ID)
		require.NoError(t, err)
		st, err := s.Stats(ctx, acc.ID, c.ID)
		require.NoError(t, err)
		require.Equal(t, "sending", st.Status)
		require.Equal(t, int64(3), st.Counts["queued"])

		// The other process: every row settles, then the campaign finishes.
		_, err = pool.Exec(ctx, `UPDATE sends SET status = 'sent' WHERE campaign_id = $1`, c.ID)
		require.NoError(t, err)
		keep(t, pool, acc.ID, c.ID, 5, "sent")
		_, err = pool.Exec(ctx, `UPDATE campaigns SET status = $2, finished_at = now() WHERE id = $1`, c.ID, final)
		require.NoError(t, err)

		clk.add(time.Millisecond) // well inside StatsTTL
		st, err = s.Stats(ctx, acc.ID, c.ID)
		require.NoError(t, err)
		require.Equal(t, final, st.Status)
		require.Equal(t, int64(0), st.Counts["queued"], "%s with counts from before the finish", final)
		require.Equal(t, int64(0), st.Counts["sending"])
		require.Equal(t, int64(5), st.Counts["sent"])
		require.Equal(t, int64(5), st.Total)
	}
}

// TestStatsBuildSkips: the recipient build records whom it left out of the target
// list: suppressed subscribers whatever their status, and of the rest the pending
// and unsubscribed ones. Subscribers outside the list are not counted.
func TestStatsBuildSkips(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	s := campaign.NewService(pool)
	fx := testfactory.New(pool)
	list := fx.List(t, acc.ID, "l")
	add := func(email, status string, member, suppressed bool) {
		id := fx.Subscriber(t, acc.ID, testfactory.Subscriber{Email: email, Status: status})
		if member {
			fx.Members(t, acc.ID, list, id)
		}
		if suppressed {
			fx.Suppression(t, acc.ID, email, "manual", "t")
		}
	}
	add("c1@example.com", "confirmed", true, false)
	add("c2@example.com", "confirmed", true, false)
	add("Sup@example.com", "confirmed", true, true)
	add("sup-pending@example.com", "pending", true, true)
	add("pending@example.com", "pending", true, false)
	add("gone@example.com", "unsubscribed", true, false)
	add("outside@example.com", "pending", false, true)

	c, err := s.Create(ctx, acc.ID, campaign.Fields{Name: str("c"), Subject: str("s"), FromEmail: str("a@example.com"),
		TextTemplate: str("hi"), ListIDs: &[]int64{list}})
	require.NoError(t, err)
	st, err := s.Stats(ctx, acc.ID, c.ID)
	require.NoError(t, err)
	require.Nil(t, st.SkippedSuppressed, "not built yet")
	require.Nil(t, st.SkippedUnconfirmed)

	_, err = s.Approve(ctx, acc.ID, c.ID, nil)
	require.NoError(t, err)
	built, started, err := executor.StartCampaign(ctx, pool, c.ID, nil)
	require.NoError(t, err)
	require.True(t, started)
	require.Equal(t, int64(2), built.Rows)
	st, err = s.Stats(ctx, acc.ID, c.ID)
	require.NoError(t, err)
	require.Equal(t, int64(2), st.Total)
	require.NotNil(t, st.SkippedSuppressed)
	require.Equal(t, int64(2), *st.SkippedSuppressed)
	require.NotNil(t, st.SkippedUnconfirmed)
	require.Equal(t, int64(2), *st.SkippedUnconfirmed)
}
