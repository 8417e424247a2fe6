package executor

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testsignal"
)

// TestDispatcherPrefetchesTwoBatches: claims are of a whole batch whatever the
// workers are doing, and feed a queue of two batches, so the next rows are ready
// when a worker frees up; never more: at no claim do leased rows exceed the
// workers' plus two batches. Under skip with a provider that cannot deduplicate
// (smtp), whose rows a crash would make unknown, the campaign claims only for
// free workers (leased rows peak at the workers') unless the operator opted into
// the queue (PrefetchNonIdempotent).
func TestDispatcherPrefetchesTwoBatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy     string
		idempotent bool
		optIn      bool
		leased     int // with the 4 workers held
	}{{"skip", true, false, 12}, {"skip", false, true, 12}, {"retry", false, false, 12}, {"skip", false, false, 4}} {
		t.Run(fmt.Sprintf("%s/idempotent=%v/optin=%v", tc.policy, tc.idempotent, tc.optIn), func(t *testing.T) {
			t.Parallel()
			pool := dbtest.New(t)
			f := fixture{t, pool}
			acct := f.account("a")
			f.subscribers(acct, "r", 50, "confirmed")
			c := f.campaign(acct, nil, tc.policy, time.Now().Add(-time.Minute))
			p := newFake(tc.idempotent)
			p.block = make(chan struct{})
			e := newExecutor(t, pool, p, Config{Tick: time.Hour, Workers: 4, BatchSize: 4, Poll: 10 * time.Millisecond,
				PrefetchNonIdempotent: tc.optIn})
			var mu sync.Mutex
			most := 0
			var sizes []int
			var unblocked atomic.Bool
			e.observeClaim = func(claim func() []store.SendClaimBatchRow) []store.SendClaimBatchRow {
				rows := claim()
				// Leased rows as the database sees them, while no send has ended (later
				// they include rows sent and not yet acknowledged).
				leased := f.counts(c)["sending"]
				mu.Lock()
				if !unblocked.Load() {
					most = max(most, leased)
				}
				sizes = append(sizes, len(rows))
				mu.Unlock()
				return rows
			}
			_, err := e.startDue(context.Background())
			require.NoError(t, err)
			runUntil(t, e)
			require.Eventually(t, func() bool {
				p.mu.Lock()
				defer p.mu.Unlock()
				return p.inFlight == 4 && f.counts(c)["sending"] == tc.leased
			}, 30*time.Second, 5*time.Millisecond, "4 rows in the workers' hands and what is prefetched")
			mu.Lock()
			unblocked.Store(true)
			mu.Unlock()
			close(p.block)
			waitSent(t, f, e, c)
			require.Equal(t, map[string]int{"sent": 50}, f.counts(c))
			calls, _, _ := p.snapshot()
			require.Len(t, calls, 50)
			for id, n := range calls {
				require.Equal(t, 1, n, id)
			}
			mu.Lock()
			defer mu.Unlock()
			// Reached (above); never more while every worker was held.
			require.LessOrEqual(t, most, tc.leased, "leased rows peak at workers + what may be prefetched")
			if tc.leased == 4 {
				return // claims follow free workers: their sizes depend on timing
			}
			// 50 rows in claims of 4: every claim but the tail's (and the empty ones that
			// find the campaign done) came back full.
			full := 0
			for _, n := range sizes {
				if n == 4 {
					full++
				}
			}
			require.GreaterOrEqual(t, full, 12, "claim sizes %v", sizes)
		})
	}
}

// TestShutdownReleasesPrefetchedRowsUnsent: a graceful stop hands the rows still
// waiting in the prefetch queue back to the queue, unsent and uncharged, while
// the send in flight finishes and is acknowledged.
func TestShutdownReleasesPrefetchedRowsUnsent(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "r", 10, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	// smtp-like, with the operator's opt-in: under skip a crash would make every
	// leased row unknown, a graceful stop must not.
	p := newFake(false)
	p.block = make(chan struct{})
	e := newExecutor(t, pool, p, Config{Tick: time.Hour, Workers: 2, BatchSize: 2, Poll: 10 * time.Millisecond,
		PrefetchNonIdempotent: true})
	_, err := e.startDue(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = e.Start(ctx) // the executor's Start never fails
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.inFlight == 2 && f.counts(c)["sending"] == 6
	}, 30*time.Second, 5*time.Millisecond, "two rows in the workers' hands, two batches prefetched")
	stopped := make(chan error, 1)
	go func() {
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		stopped <- e.Stop(sctx)
	}()
	select {
	case <-e.claimCtx.Done(): // Stop ends claiming first
	case <-time.After(testsignal.Timeout):
		t.Fatal("Stop did not stop claiming")
	}
	close(p.block) // the sends in flight end after claiming stopped
	require.NoError(t, <-stopped)
	require.Equal(t, map[string]int{"sent": 2, "queued": 8}, f.counts(c))
	calls, _, _ := p.snapshot()
	require.Len(t, calls, 2, "no prefetched row reached the provider")
	require.Zero(t, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'queued'
		AND (attempts <> 0 OR lease_until IS NOT NULL)`, c), "released rows are not charged an attempt")
	require.Zero(t, f.int64(`SELECT count(*) FROM executors`), "deregistered")
}

// TestPrefetchedRowLeaseExpiresWithALiveExecutor: rows waiting in the prefetch
// queue are leased like rows in flight. When their lease ends while the process is
// alive (its only worker stuck on a slow send) the rescuer settles them like any
// expired claim (unknown, under skip with a provider that cannot deduplicate);
// the worker that reaches one later finds its lease gone and never sends it from
// that claim. No recipient reaches the provider twice.
func TestPrefetchedRowLeaseExpiresWithALiveExecutor(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	clk := newClock()
	acct := f.account("a")
	f.subscribers(acct, "r", 3, "confirmed")
	c := f.campaign(acct, nil, "skip", clk.Now())
	p := newFake(false) // with the operator's opt-in to prefetch (PrefetchNonIdempotent)
	p.block = make(chan struct{})
	e := newExecutor(t, pool, p, Config{Tick: time.Hour, Workers: 1, BatchSize: 1, Lease: time.Minute,
		Now: clk.Now, Poll: 10 * time.Millisecond, Heartbeat: 50 * time.Millisecond, Maintenance: time.Hour,
		PrefetchNonIdempotent: true})
	_, err := e.startDue(context.Background())
	require.NoError(t, err)
	runUntil(t, e)
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.inFlight == 1 && f.counts(c)["sending"] == 3
	}, 30*time.Second, 5*time.Millisecond, "one row in the worker's hands, two prefetched")
	clk.Add(61 * time.Second)               // every lease has ended; the executor still beats
	_, err = e.rescue(context.Background()) // or its heartbeat's rescue does, whichever runs first
	require.NoError(t, err)
	require.Equal(t, map[string]int{"unknown": 3}, f.counts(c), "prefetched rows are rescued like the row in flight")
	close(p.block)
	// The row in flight was delivered: its late acknowledgement records it over the
	// rescuer's guess. The prefetched ones reach the provider only through a fresh
	// claim: handed back unsent and claimed again when their campaign was still
	// sending, left unknown (never sent) when it had finished meanwhile, every row
	// being settled.
	require.Eventually(t, func() bool {
		calls, _, _ := p.snapshot()
		return f.status(c) == "sent" && f.counts(c)["sent"] == len(calls) && len(calls) >= 1
	}, time.Minute, 10*time.Millisecond, "every provider call acknowledged")
	counts := f.counts(c)
	calls, _, _ := p.snapshot()
	require.Equal(t, 3, counts["sent"]+counts["unknown"], "%v", counts)
	for id, n := range calls {
		require.Equal(t, 1, n, "%s reached the provider once", id)
	}
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
	waitSent(t, f, e, c)
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
