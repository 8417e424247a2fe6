package executor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/suppression"
)

func openPool(t *testing.T, url string, conns int32) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := postgres.Open(ctx, url, conns)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// TestFourExecutorsSendEveryRecipientExactlyOnce runs four executors, each with its
// own pool as separate processes would have, on one 20,000-recipient campaign. The
// provider fails 2% of first attempts temporarily so retries interleave with claims.
func TestFourExecutorsSendEveryRecipientExactlyOnce(t *testing.T) {
	t.Parallel()
	const n = 20000
	url := dbtest.URL(t)
	f := fixture{t, openPool(t, url, 4)}
	acct := f.account("big")
	f.subscribers(acct, "r", n, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Second))

	p := newFake(true)
	p.fail = func(m provider.Message, call int) error {
		if call == 1 && rand.IntN(50) == 0 {
			return temporary("busy")
		}
		return nil
	}
	es := make([]*Executor, 4)
	for i := range es {
		es[i] = newExecutor(t, openPool(t, url, 4), p, Config{Tick: 50 * time.Millisecond, Workers: 32,
			BatchSize: 100, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond,
			Poll: 20 * time.Millisecond, Maintenance: 100 * time.Millisecond})
	}
	shareFinished(es...)
	for _, e := range es {
		runUntil(t, e)
	}
	waitSent(t, f, es[0], c)
	_, accepted, _ := p.snapshot()
	require.Len(t, accepted, n, "every recipient accepted")
	for job, k := range accepted {
		require.Equal(t, 1, k, "job %s accepted %d times", job, k)
	}
	require.Equal(t, map[string]int{"sent": n}, f.counts(c))
}

// TestOptOutsDuringTheSendAreObeyed suppresses 1,000 recipients while the campaign is
// going out. It orders events with one counter: each suppression takes a number
// after it committed, each claim statement one before it started. A claim that
// started after a suppression committed sees it (READ COMMITTED takes the snapshot
// at statement start) and must mark that row suppressed; the test fails if any such
// row was claimed for sending, or if any suppressed row reached the provider.
func TestOptOutsDuringTheSendAreObeyed(t *testing.T) {
	t.Parallel()
	const n, optOuts = 6000, 1000
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "r", n, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Second))

	var seq atomic.Int64
	var mu sync.Mutex
	claimedAt := map[string]int64{} // email → counter before the claim that leased it
	suppressedAt := map[string]int64{}

	p := newFake(true)
	// A little latency so the send lasts long enough to overlap the opt-outs.
	p.fail = func(provider.Message, int) error { time.Sleep(200 * time.Microsecond); return nil }
	e := newExecutor(t, pool, p, Config{Tick: time.Hour, Workers: 8, BatchSize: 20, Poll: 10 * time.Millisecond})
	e.observeClaim = func(claim func() []store.SendClaimBatchRow) []store.SendClaimBatchRow {
		start := seq.Add(1)
		rows := claim()
		mu.Lock()
		for _, r := range rows {
			if r.Status == "sending" {
				claimedAt[r.Email] = start
			}
		}
		mu.Unlock()
		return rows
	}
	// Started first, so every address that opts out is in the recipient list.
	_, err := e.startDue(context.Background())
	require.NoError(t, err)
	runUntil(t, e)

	// Opt-outs land across the whole campaign, in random order, from two writers.
	perm := rand.Perm(n)[:optOuts]
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(perm); i += 2 {
				email := fmt.Sprintf("r%d@example.com", perm[i]+1)
				_, _, err := suppression.Add(context.Background(), pool, acct, email, "unsubscribe", "test")
				if err != nil {
					t.Error(err)
					return
				}
				after := seq.Add(1)
				mu.Lock()
				suppressedAt[email] = after
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	waitSent(t, f, e, c)

	_, accepted, order := p.snapshot()
	sentTo := map[string]bool{}
	for _, m := range order {
		sentTo[m.To] = true
	}
	mu.Lock()
	defer mu.Unlock()
	inFlight, stopped := 0, 0
	for email, sup := range suppressedAt {
		claim, claimed := claimedAt[email]
		if claimed {
			require.Less(t, claim, sup, "%s was claimed by a statement that started after its suppression committed", email)
			inFlight++
			continue
		}
		require.False(t, sentTo[email], "%s was sent without being claimed", email)
		stopped++
	}
	counts := f.counts(c)
	require.Equal(t, stopped, counts["suppressed"])
	require.Equal(t, n-stopped, counts["sent"])
	require.Len(t, accepted, n-stopped)
	require.Positive(t, stopped, "the test must overlap the send")
	t.Logf("opt-outs: %d stopped at claim, %d already claimed (in flight or sent) when they committed", stopped, inFlight)
}

// TestAccountsAreServedRoundRobin: a small campaign of one tenant finishes long before
// a big campaign of another tenant that started first.
func TestAccountsAreServedRoundRobin(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	big, small := f.account("big"), f.account("small")
	f.subscribers(big, "b", 3000, "confirmed")
	f.subscribers(small, "s", 60, "confirmed")
	cb := f.campaign(big, nil, "skip", time.Now().Add(-time.Minute))
	cs := f.campaign(small, nil, "skip", time.Now().Add(-time.Minute))
	p := newFake(true)
	// The pool's connections are open before the first claims: the dealer passes
	// over a campaign whose claim is under way (it does not keep workers idle for
	// it), and a claim that had to dial a connection on a loaded machine let the
	// other account's claims run ahead of it for hundreds of messages (1809 once).
	warmPool(t, pool, 8)
	e := newExecutor(t, pool, p, Config{Tick: time.Hour, Workers: 4, BatchSize: 10})
	e.signals.claimed.Init()
	_, err := e.startDue(context.Background())
	require.NoError(t, err)
	runUntil(t, e)
	waitSent(t, f, e, cb)
	require.Equal(t, "sent", f.status(cs))
	_, _, order := p.snapshot()
	last := 0
	for i, m := range order {
		if m.To[0] == 's' {
			last = i
		}
	}
	var claims []string
	for _, c := range e.signals.claimed.Drain() {
		who := "big"
		if c.campaign == cs {
			who = "small"
		}
		claims = append(claims, fmt.Sprintf("%s:%d:%s", who, c.rows, c.took.Round(time.Millisecond)))
	}
	t.Logf("the small tenant's last message at position %d; claims in order: %v", last, claims)
	// Dealt in turns, the 60 small-tenant messages are done within the first ~120
	// sends once both campaigns send; served in order they would wait behind 3,000.
	// The bound leaves room for the small campaign's start (its build) lagging the big
	// one's on a loaded machine (539 seen once in CI): a first-come dealer still fails it.
	require.Less(t, last, 1000, "the small tenant's last message went out at position %d", last)
}

// warmPool opens up to n of pool's connections and returns them to it idle, so
// that what the test measures next does not pay for dialling them.
func warmPool(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	n = min(n, int(pool.Config().MaxConns))
	conns := make([]*pgxpool.Conn, 0, n)
	for range n {
		c, err := pool.Acquire(context.Background())
		require.NoError(t, err)
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
}

// TestShutdownReleasesUnsentClaims: rows claimed but not yet sent when claiming
// stops go back to the queue with their lease cleared and the attempt refunded.
func TestShutdownReleasesUnsentClaims(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, e, c := started(t, 10, "skip", newFake(true), clk)
	rows, err := e.claim(context.Background(), c, 5)
	require.NoError(t, err)
	e.handOutWith(c, e.routeOf(c), rows, clk.Now(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()         // claiming has stopped before any worker picked a job
	_ = e.Start(ctx) // the executor's Start never fails
	require.NoError(t, e.Stop(context.Background()))
	require.Equal(t, map[string]int{"queued": 10}, f.counts(c.ID))
	require.Equal(t, int64(0), f.int64(`SELECT count(*) FROM sends WHERE lease_until IS NOT NULL OR attempts <> 0`))
}

// TestShutdownLetsInFlightSendsFinish: sends in flight at shutdown complete and are
// acknowledged; nothing is left leased.
func TestShutdownLetsInFlightSendsFinish(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "r", 50, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	p := newFake(false)
	p.block = make(chan struct{})
	e := newExecutor(t, pool, p, Config{Tick: time.Hour, Workers: 4, BatchSize: 4})
	ctx, cancel := context.WithCancel(context.Background())
	_ = e.Start(ctx) // the executor's Start never fails
	require.Eventually(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.inFlight == 4 }, 30*time.Second, time.Millisecond)
	cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop(context.Background()) }()
	close(p.block)
	require.NoError(t, <-stopped)
	counts := f.counts(c)
	require.Equal(t, 4, counts["sent"])
	require.Equal(t, 46, counts["queued"])
	require.Zero(t, counts["sending"])
}

// TestShutdownDeadlineRequeuesInterruptedSends: sends still in flight when the
// shutdown deadline passes are cut; with an idempotent provider they go back to the
// queue due at once (the replay is deduplicated downstream).
func TestShutdownDeadlineRequeuesInterruptedSends(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "r", 10, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	p := newFake(true)
	p.block = make(chan struct{}) // never opened: every send waits for its context
	e := newExecutor(t, pool, p, Config{Tick: time.Hour, Workers: 4, BatchSize: 4})
	ctx, cancel := context.WithCancel(context.Background())
	_ = e.Start(ctx) // the executor's Start never fails
	require.Eventually(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.inFlight == 4 }, 30*time.Second, time.Millisecond)
	cancel()
	expired, cancelDeadline := context.WithCancel(context.Background())
	cancelDeadline()
	require.NoError(t, e.Stop(expired))
	require.Equal(t, map[string]int{"queued": 10}, f.counts(c))
	require.Equal(t, int64(0), f.int64(`SELECT count(*) FROM sends WHERE next_attempt_at > now() OR lease_until IS NOT NULL`))
}
