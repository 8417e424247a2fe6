package executor

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/suppression"
	"github.com/sendonce/sendonce/internal/testfactory"
)

func TestStartBuildsTheRecipientListOnce(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	clk := newClock()
	acct, other := f.account("a"), f.account("b")
	f.subscribers(acct, "in", 10, "confirmed")
	f.subscribers(acct, "pending", 3, "pending")
	f.subscribers(acct, "gone", 2, "unsubscribed")
	f.subscribers(acct, "out", 4, "confirmed") // confirmed but in no target list
	f.subscribers(other, "in", 5, "confirmed") // another tenant's addresses
	l1, l2 := f.list(acct, "one"), f.list(acct, "two")
	f.members(acct, l1, "in")
	f.members(acct, l2, "in1") // in1, in10 are in both lists
	f.members(acct, l1, "pending")
	f.members(acct, l2, "gone")
	_, _, err := suppression.Add(ctx, pool, acct, "in2@example.com", "manual", "test")
	require.NoError(t, err)
	c := f.campaign(acct, []int64{l1, l2}, "skip", clk.Now())
	later := f.campaign(acct, []int64{l1}, "skip", clk.Now().Add(time.Hour))

	e := newExecutor(t, pool, newFake(true), Config{Now: clk.Now})
	n, err := e.startDue(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the due campaign starts")
	require.Equal(t, "sending", f.status(c))
	require.Equal(t, "approved", f.status(later))
	// in1..in10 minus the suppressed in2; in1 and in10 sit in both lists but get one row.
	require.Equal(t, map[string]int{"queued": 9}, f.counts(c))
	require.Equal(t, int64(0), f.int64(`SELECT count(*) FROM sends
		WHERE campaign_id = $1 AND job_id <> 'campaign:' || campaign_id || ':' || subscriber_id`, c))
	require.Equal(t, int64(9), f.int64(`SELECT count(DISTINCT email_lower) FROM sends WHERE campaign_id = $1 AND account_id = $2`, c, acct))

	// The CAS: a second start (another replica, a second tick) does nothing.
	ok, err := e.startCampaign(ctx, c)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, map[string]int{"queued": 9}, f.counts(c))

	clk.Add(time.Hour)
	n, err = e.startDue(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, "sending", f.status(later))
}

func TestEmptyListIDsTargetsEveryConfirmedSubscriber(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "yes", 7, "confirmed")
	f.subscribers(acct, "no", 3, "pending")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	e := newExecutor(t, pool, newFake(true), Config{})
	_, err := e.startDue(context.Background())
	require.NoError(t, err)
	require.Equal(t, map[string]int{"queued": 7}, f.counts(c))
}

func TestSubscriberAddedAfterStartDoesNotJoin(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "early", 5, "confirmed")
	l := f.list(acct, "l")
	f.members(acct, l, "early")
	c := f.campaign(acct, []int64{l}, "skip", time.Now().Add(-time.Minute))
	p := newFake(true)
	e := newExecutor(t, pool, p, Config{})
	_, err := e.startDue(context.Background())
	require.NoError(t, err)

	late := f.subscribers(acct, "late", 1, "confirmed")
	f.members(acct, l, "late")
	sender := newExecutor(t, pool, p, Config{Tick: time.Hour})
	runUntil(t, sender)
	waitSent(t, f, sender, c)
	calls, _, _ := p.snapshot()
	require.Len(t, calls, 5)
	require.NotContains(t, calls, jobID(c, late))
	require.Equal(t, map[string]int{"sent": 5}, f.counts(c))
}

// TestNotifyStartsAnApprovedCampaignAtOnce approves a campaign the way the API does
// (pg_notify in the approving transaction) while the tick is an hour: only the
// LISTEN path can start it.
func TestNotifyStartsAnApprovedCampaignAtOnce(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "s", 3, "confirmed")
	p := newFake(true)
	e := newExecutor(t, pool, p, Config{Tick: time.Hour})
	runUntil(t, e)
	// The first scheduler pass ran at start; wait for the listener to be connected
	// by waiting for its LISTEN to show up in pg_stat_activity.
	listener := func() int64 {
		return f.int64(`SELECT coalesce(max(pid), 0) FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'LISTEN%'`)
	}
	require.Eventually(t, func() bool { return listener() != 0 }, 30*time.Second, 10*time.Millisecond)
	// Cut the LISTEN connection, as a database restart would: the executor must
	// listen again on a new one.
	old := listener()
	f.exec(`SELECT pg_terminate_backend($1::int)`, old)
	cut := time.Now()
	require.Eventually(t, func() bool { pid := listener(); return pid != 0 && pid != old }, 30*time.Second, 10*time.Millisecond)
	t.Logf("listening again %s after the cut", time.Since(cut))

	c := testfactory.New(pool).Campaign(t, acct, testfactory.Campaign{Name: "n", Text: "hi"})
	approved := time.Now()
	tx, err := pool.Begin(context.Background())
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()
	_, err = tx.Exec(context.Background(), `UPDATE campaigns SET status = 'approved', scheduled_for = now(), approved_at = now() WHERE id = $1`, c)
	require.NoError(t, err)
	_, err = tx.Exec(context.Background(), `SELECT pg_notify($1, $2)`, postgres.CampaignChannel, strconv.FormatInt(c, 10))
	require.NoError(t, err)
	require.NoError(t, tx.Commit(context.Background()))

	require.Eventually(t, func() bool {
		_, accepted, _ := p.snapshot()
		return len(accepted) > 0
	}, 30*time.Second, time.Millisecond)
	t.Logf("approval → first send: %s (tick 1h, NOTIFY path)", time.Since(approved))
	waitSent(t, f, e, c)
}

// TestScheduledCampaignStartsWhenDueNotATickLater: the approval's NOTIFY arrives
// before the campaign is due; the scheduler then sleeps until scheduled_for rather
// than until the next (hour-long) tick.
func TestScheduledCampaignStartsWhenDueNotATickLater(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "s", 2, "confirmed")
	p := newFake(true)
	e := newExecutor(t, pool, p, Config{Tick: time.Hour})
	runUntil(t, e)
	due := time.Now().Add(300 * time.Millisecond)
	c := f.campaign(acct, nil, "skip", due)
	f.exec(`SELECT pg_notify($1, $2)`, postgres.CampaignChannel, strconv.FormatInt(c, 10))
	waitSent(t, f, e, c)
	var started time.Time
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT started_at FROM campaigns WHERE id = $1`, c).Scan(&started))
	require.False(t, started.Before(due), "started %s before it was due %s", started, due)
	t.Logf("started %s after scheduled_for", started.Sub(due))
}
