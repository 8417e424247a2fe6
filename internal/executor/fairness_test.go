package executor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// blockAt is a query tracer that holds the first statement containing marker
// before it is sent, until release is closed: it holds a build open at a chosen
// step without a lock or a transaction of the test's own.
type blockAt struct {
	marker           string
	once             sync.Once
	reached, release chan struct{}
}

func (b *blockAt) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, b.marker) {
		b.once.Do(func() {
			close(b.reached)
			<-b.release
		})
	}
	return ctx
}

func (b *blockAt) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Account A's segment build must not hold back account B's events, however long it
// runs: the event readers stop below the oldest running transaction id, so a build
// inside a transaction that holds one (as the approved → sending CAS did) kept
// every tenant's events unreadable for the whole build (measured from outside:
// 36.9 s). The build is held open deterministically: the executor's pool holds the
// statement that reads A's segment until the test has read B's event.
func TestBuildHeldOpenDoesNotHoldBackAnotherAccountsEvents(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	clk := newClock()
	a, b := f.account("a"), f.account("b")
	f.subscribers(a, "s", 5, "confirmed")
	seg := testfactory.New(pool).Segment(t, a, testfactory.Segment{Name: "some", Match: "$.n >= 2"})
	c := f.campaign(a, nil, "skip", clk.Now())
	f.exec(`UPDATE campaigns SET segment_id = $1 WHERE id = $2`, seg, c)

	hold := &blockAt{marker: "-- name: SegmentGet :one", reached: make(chan struct{}), release: make(chan struct{})}
	cfg := pool.Config().Copy()
	cfg.ConnConfig.Tracer = hold
	held, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(held.Close)
	e := newExecutor(t, held, newFake(true), Config{Now: clk.Now})
	done := make(chan error, 1)
	go func() {
		_, err := e.startCampaign(ctx, c)
		done <- err
	}()
	released := false
	release := func() {
		if !released {
			released = true
			close(hold.release)
		}
	}
	t.Cleanup(func() {
		release()
		<-done //nolint:errcheck // the run's error is checked where the test ends it
	})
	<-hold.reached

	q := store.New(pool)
	id, err := q.EventInsert(ctx, store.EventInsertParams{AccountID: b, Type: "suppression.created", Data: []byte(`{}`)})
	require.NoError(t, err)
	// Readers stop below the oldest transaction id running in the whole cluster
	// (other tests' too), so the event is waited for; A's build stays held all along.
	var evs []store.EventListAfterRow
	for deadline := time.Now().Add(time.Minute); len(evs) == 0; time.Sleep(20 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "B's committed event stayed unreadable while A's build ran")
		evs, err = q.EventListAfter(ctx, store.EventListAfterParams{AccountID: b, Types: []string{}, Lim: 10})
		require.NoError(t, err)
	}
	require.Len(t, evs, 1)
	require.Equal(t, id, evs[0].ID)
	select {
	case err := <-done:
		done <- err // for the cleanup
		t.Fatal("A's build ended while it was held")
	default:
	}

	release()
	require.NoError(t, <-done)
	done <- nil // for the cleanup
	require.Equal(t, "sending", f.status(c))
	require.Equal(t, map[string]int{"queued": 4}, f.counts(c))
	require.EqualValues(t, 1, f.int64(`SELECT count(*) FROM events WHERE type = 'campaign.started' AND account_id = $1`, a))
}

// A campaign whose segment cannot be evaluated (a jsonpath variable saved before
// variables were refused fails every row with 42704) fails alone, with its reason
// on the campaign and in a campaign.failed event; the scheduler goes on to start
// another account's campaign that fell due after it. The old scheduler stopped at
// the first error, so B's campaign never started while A's stayed approved.
func TestCampaignThatCannotStartFailsAloneAndOthersStart(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	clk := newClock()
	a, b := f.account("a"), f.account("b")
	f.subscribers(a, "a", 3, "confirmed")
	f.subscribers(b, "b", 3, "confirmed")
	seg := testfactory.New(pool).Segment(t, a, testfactory.Segment{Name: "var", Match: "$x == 1"})
	bad := f.campaign(a, nil, "skip", clk.Now().Add(-time.Minute))
	f.exec(`UPDATE campaigns SET segment_id = $1 WHERE id = $2`, seg, bad)
	good := f.campaign(b, nil, "skip", clk.Now())
	e := newExecutor(t, pool, newFake(true), Config{Now: clk.Now})

	n, err := e.startDue(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, "sending", f.status(good))
	require.Equal(t, map[string]int{"queued": 3}, f.counts(good))
	require.Equal(t, "failed", f.status(bad))
	require.Empty(t, f.counts(bad))
	var reason string
	require.NoError(t, pool.QueryRow(ctx, `SELECT failed_reason FROM campaigns WHERE id = $1`, bad).Scan(&reason))
	require.Contains(t, reason, `jsonpath variable "x"`)
	require.EqualValues(t, 1, f.int64(`SELECT count(*) FROM events WHERE account_id = $1 AND type = 'campaign.failed'
		AND data->>'campaign_id' = $2 AND data->>'reason' = $3`, a, fmt.Sprint(bad), reason))

	// Nothing is due any more: the failed campaign is not retried.
	n, err = e.startDue(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, n)
}

// The crash rule of a build in steps: a campaign whose builder died mid-build is
// building with part of its list. It is never claimed or finished as if whole;
// while its builder lives nobody else builds it; once the builder's executors row
// is gone (as ExecutorDeleteDead removes a dead one) any executor builds it again,
// inserting only what is missing, and only then is it sending.
func TestBuildOfADeadExecutorIsTakenOverAndNeverFinishedPartial(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	clk := newClock()
	acct := f.account("a")
	f.subscribers(acct, "s", 10, "confirmed")
	f.subscribers(acct, "p", 2, "pending")
	c := f.campaign(acct, nil, "skip", clk.Now())
	dead, err := store.New(pool).ExecutorRegister(context.Background(), store.ExecutorRegisterParams{Host: "gone", Pid: 1})
	require.NoError(t, err)
	// The dead builder got three rows in before it stopped.
	f.exec(`UPDATE campaigns SET status = 'building', build_executor_id = $1 WHERE id = $2`, dead, c)
	testfactory.New(pool).Sends(t, acct, c, testfactory.Sends{SubscriberStatus: "confirmed", Limit: 3})
	first := f.int64(`SELECT min(id) FROM sends WHERE campaign_id = $1`, c)

	e := newExecutor(t, pool, newFake(true), Config{Now: clk.Now})
	require.False(t, e.finish(ctx, c), "a building campaign is never finished")
	n, err := e.startDue(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, n, "a live builder's campaign is not taken over")
	require.Equal(t, "building", f.status(c))

	f.exec(`DELETE FROM executors WHERE id = $1`, dead)
	n, err = e.startDue(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, "sending", f.status(c))
	require.Equal(t, map[string]int{"queued": 10}, f.counts(c))
	require.Equal(t, first, f.int64(`SELECT min(id) FROM sends WHERE campaign_id = $1`, c), "the first rows were kept")
	require.EqualValues(t, 2, f.int64(`SELECT skipped_unconfirmed FROM campaigns WHERE id = $1`, c))
	require.EqualValues(t, 1, f.int64(`SELECT count(*) FROM events WHERE type = 'campaign.started'`))
}

// A cancel while the list is being built ends the build: the builder inserts
// nothing more and does not move the campaign to sending.
func TestCancelDuringTheBuildStopsIt(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	clk := newClock()
	acct := f.account("a")
	f.subscribers(acct, "s", 10, "confirmed")
	c := f.campaign(acct, nil, "skip", clk.Now())

	// Held where the build reads its first window, after approved → building.
	hold := &blockAt{marker: "-- name: CampaignAudienceWindow :one", reached: make(chan struct{}), release: make(chan struct{})}
	cfg := pool.Config().Copy()
	cfg.ConnConfig.Tracer = hold
	held, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(held.Close)
	e := newExecutor(t, held, newFake(true), Config{Now: clk.Now})
	type res struct {
		ok  bool
		err error
	}
	done := make(chan res, 1)
	go func() {
		ok, err := e.startCampaign(ctx, c)
		done <- res{ok, err}
	}()
	<-hold.reached
	require.Equal(t, "building", f.status(c))
	f.exec(`UPDATE campaigns SET status = 'cancelled', cancelled_at = now() WHERE id = $1 AND status = 'building'`, c)
	close(hold.release)
	r := <-done
	require.NoError(t, r.err)
	require.False(t, r.ok)
	require.Equal(t, "cancelled", f.status(c))
	require.Empty(t, f.counts(c))
}

// A build whose executor died is taken over without any NOTIFY (forgetting a dead
// executor announces nothing) and with the tick far away: while a campaign is
// building, the scheduler sleeps at most a heartbeat between rounds.
func TestSchedulerLooksForBuildsToTakeOverEveryHeartbeat(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	acct := f.account("a")
	c := f.campaign(acct, nil, "skip", time.Now().Add(time.Hour))
	e := newExecutor(t, pool, newFake(true), Config{Tick: time.Hour, Heartbeat: 2 * time.Second})
	require.Equal(t, time.Hour, e.untilNextDue(ctx).Round(time.Minute), "the next campaign is due in an hour")
	f.exec(`UPDATE campaigns SET status = 'building' WHERE id = $1`, c)
	require.Equal(t, 2*time.Second, e.untilNextDue(ctx))
}
