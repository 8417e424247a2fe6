package executor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
)

// TestDispatcherPrefetchesOneBatch: while every worker is busy, the dispatcher
// claims one more batch, so the next rows are ready when a worker frees up, and
// never more: at no claim do claimed, unacknowledged rows exceed workers + one batch.
func TestDispatcherPrefetchesOneBatch(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "r", 50, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	p := newFake(true)
	p.block = make(chan struct{})
	e := newExecutor(t, pool, p, Config{Tick: time.Hour, Workers: 4, BatchSize: 4, Poll: 10 * time.Millisecond})
	var mu sync.Mutex
	most := 0
	e.observeClaim = func(claim func() []store.SendClaimBatchRow) []store.SendClaimBatchRow {
		rows := claim()
		leased := f.counts(c)["sending"] // claimed and not yet acknowledged, as the database sees it
		mu.Lock()
		most = max(most, leased)
		mu.Unlock()
		return rows
	}
	_, err := e.startDue(context.Background())
	require.NoError(t, err)
	runUntil(t, e)
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.inFlight == 4 && f.counts(c)["sending"] == 8
	}, 30*time.Second, 5*time.Millisecond, "4 rows in the workers' hands and 4 prefetched")
	close(p.block)
	require.Eventually(t, func() bool { return f.status(c) == "sent" }, time.Minute, 10*time.Millisecond)
	require.Equal(t, map[string]int{"sent": 50}, f.counts(c))
	calls, _, _ := p.snapshot()
	require.Len(t, calls, 50)
	for id, n := range calls {
		require.Equal(t, 1, n, id)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 8, most, "claimed and unacknowledged rows peak at workers + batch")
}

// TestPrefetchedRowWithTooLittleLeaseIsHandedBack: a row claimed ahead while the
// only worker is busy keeps the lease dated before its claim; when the worker gets
// to it with less than a third of the lease left, the provider never sees it from
// that claim: it goes back to the queue uncharged and a fresh claim sends it.
func TestPrefetchedRowWithTooLittleLeaseIsHandedBack(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	clk := newClock()
	acct := f.account("a")
	f.subscribers(acct, "r", 2, "confirmed")
	c := f.campaign(acct, nil, "skip", clk.Now())
	p := newFake(true) // idempotent: the campaign may prefetch
	p.block = make(chan struct{})
	e := newExecutor(t, pool, p, Config{Tick: time.Hour, Workers: 1, BatchSize: 1, Lease: time.Minute,
		Now: clk.Now, Poll: 10 * time.Millisecond})
	_, err := e.startDue(context.Background())
	require.NoError(t, err)
	runUntil(t, e)
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.inFlight == 1 && f.counts(c)["sending"] == 2
	}, 30*time.Second, 5*time.Millisecond, "one row in the worker's hands, one prefetched")
	clk.Add(41 * time.Second) // both leases now have less than a third (20 s) left
	close(p.block)
	require.Eventually(t, func() bool { return f.status(c) == "sent" }, time.Minute, 10*time.Millisecond)
	require.Equal(t, map[string]int{"sent": 2}, f.counts(c))
	calls, accepted, _ := p.snapshot()
	require.Len(t, calls, 2)
	for id, n := range calls {
		require.Equal(t, 1, n, "%s reached the provider once", id)
		require.Equal(t, 1, accepted[id])
	}
	// The in-flight send was charged once; the prefetched row's first claim was
	// refunded, so its successful claim is its only attempt too.
	require.Equal(t, int64(0), f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND attempts <> 1`, c))
}

// TestNoPrefetchWhenACrashWouldMakeRowsUnknown: with a provider that cannot drop a
// replay and a campaign under skip, every leased row becomes unknown if the
// process dies, so the dispatcher leases only as many rows as workers can send;
// the same campaign under retry prefetches a batch.
func TestNoPrefetchWhenACrashWouldMakeRowsUnknown(t *testing.T) {
	t.Parallel()
	for policy, leased := range map[string]int{"skip": 4, "retry": 8} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			pool := dbtest.New(t)
			f := fixture{t, pool}
			acct := f.account("a")
			f.subscribers(acct, "r", 30, "confirmed")
			c := f.campaign(acct, nil, policy, time.Now().Add(-time.Minute))
			p := newFake(false)
			p.block = make(chan struct{})
			e := newExecutor(t, pool, p, Config{Tick: time.Hour, Workers: 4, BatchSize: 4, Poll: 10 * time.Millisecond})
			var mu sync.Mutex
			most := 0
			e.observeClaim = func(claim func() []store.SendClaimBatchRow) []store.SendClaimBatchRow {
				rows := claim()
				leased := f.counts(c)["sending"]
				mu.Lock()
				most = max(most, leased)
				mu.Unlock()
				return rows
			}
			_, err := e.startDue(context.Background())
			require.NoError(t, err)
			runUntil(t, e)
			require.Eventually(t, func() bool {
				p.mu.Lock()
				defer p.mu.Unlock()
				return p.inFlight == 4 && f.counts(c)["sending"] == leased
			}, 30*time.Second, 5*time.Millisecond)
			close(p.block)
			require.Eventually(t, func() bool { return f.status(c) == "sent" }, time.Minute, 10*time.Millisecond)
			require.Equal(t, map[string]int{"sent": 30}, f.counts(c))
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, leased, most)
		})
	}
}
