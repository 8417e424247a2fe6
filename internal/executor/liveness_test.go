package executor

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
)

// twoExecutors starts a campaign of n recipients and two registered executors on
// one injected clock, with a lease far longer than the liveness bound.
func twoExecutors(t *testing.T, n int, policy string, p *fakeProvider) (fixture, *heldClock, *Executor, *Executor, *campaign) {
	t.Helper()
	clk := newClock()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "s", n, "confirmed")
	id := f.campaign(acct, nil, policy, clk.Now())
	cfg := Config{Now: clk.Now, Lease: 2 * time.Minute, Heartbeat: 2 * time.Second, MaxAttempts: 3,
		BackoffBase: time.Second, Workers: 100, BatchSize: 100}
	a, b := newExecutor(t, pool, p, cfg), newExecutor(t, pool, p, cfg)
	ctx := context.Background()
	a.beat(ctx)
	b.beat(ctx)
	_, err := a.startDue(ctx)
	require.NoError(t, err)
	return f, clk, a, b, sendingCampaign(t, a, id)
}

// TestRowsOfAStoppedExecutorAreRescuedWithinSeconds: executor a claims rows and
// dies (no more heartbeats). Once its heartbeat is three intervals old, b's
// rescuer takes its rows back, long before their two-minute lease ends; b's own
// rows stay; an idempotent provider's rows are replayed, SMTP's (skip) unknown.
func TestRowsOfAStoppedExecutorAreRescuedWithinSeconds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		idempotent bool
		want       string
	}{
		{"idempotent provider replays", true, "queued"},
		{"plain SMTP with skip marks unknown", false, "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, clk, a, b, c := twoExecutors(t, 6, "skip", newFake(tc.idempotent))
			ctx := context.Background()
			held, err := a.claim(ctx, c, 4)
			require.NoError(t, err)
			require.Len(t, held, 4)
			aID := a.live.ID()
			require.Equal(t, aID, claimant(held[0]), "claims carry the claiming executor")
			own, err := b.claim(ctx, c, 2)
			require.NoError(t, err)
			require.Len(t, own, 2)

			// b just started: for a whole dead interval it judges nobody, since
			// after a database outage every heartbeat is stale for a while.
			clk.Add(5 * time.Second)
			b.beat(ctx) // a stays silent: killed
			require.False(t, b.mayJudgeLiveness())
			backdateOK(b, time.Minute) // as if b had beaten all along
			require.True(t, b.mayJudgeLiveness())
			// Two intervals of silence are not death yet.
			n, err := b.rescue(ctx)
			require.NoError(t, err)
			require.Zero(t, n)

			clk.Add(2 * time.Second)
			b.beat(ctx)
			n, err = b.rescue(ctx)
			require.NoError(t, err)
			require.Equal(t, 4, n, "a's rows, not b's own")
			require.Equal(t, map[string]int{tc.want: 4, "sending": 2}, f.counts(c.ID))
			require.Equal(t, "executor stopped while sending", readSend(t, f.pool, held[0].ID).LastError)

			require.NoError(t, b.maintainOnce(ctx))
			require.Equal(t, int64(1), f.int64(`SELECT count(*) FROM executors`), "the dead executor is forgotten")
			var res []result
			for _, r := range own {
				res = append(res, b.send(ctx, job{campaign: c, row: r}))
			}
			b.flush(res)
		})
	}
}

// TestAliveExecutorKeepsItsRows: an executor that keeps beating keeps its rows for
// as long as their lease, however long its sends take; the lease stays the bound.
func TestAliveExecutorKeepsItsRows(t *testing.T) {
	t.Parallel()
	f, clk, a, b, c := twoExecutors(t, 2, "skip", newFake(true))
	ctx := context.Background()
	held, err := a.claim(ctx, c, 2)
	require.NoError(t, err)
	for range 30 { // a minute of heartbeats from both
		clk.Add(2 * time.Second)
		a.beat(ctx)
		b.beat(ctx)
	}
	n, err := b.rescue(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, map[string]int{"sending": 2}, f.counts(c.ID))
	clk.Add(61 * time.Second)
	b.beat(ctx)
	n, err = b.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the lease ran out: a live but frozen holder loses its rows")
	require.Equal(t, "lease expired while sending", readSend(t, f.pool, held[0].ID).LastError)
}

// TestExecutorDeclaredDeadDoesNotSendItsOldClaims: a process frozen longer than
// the dead interval comes back. Its rows were rescued and its registration
// deleted; it registers again and hands the old claims back unsent, so the
// recipient cannot get the message from it and from the replay.
func TestExecutorDeclaredDeadDoesNotSendItsOldClaims(t *testing.T) {
	t.Parallel()
	p := newFake(false)
	f, clk, a, b, c := twoExecutors(t, 1, "retry", p)
	ctx := context.Background()
	held, err := a.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, held, 1)
	oldID := claimant(held[0])

	clk.Add(7 * time.Second) // a froze
	b.beat(ctx)
	require.NoError(t, b.maintainOnce(ctx))
	require.Equal(t, map[string]int{"queued": 1}, f.counts(c.ID))

	res := a.send(ctx, job{campaign: c, row: held[0]})
	require.Equal(t, statusRelease, res.status, "a stale heartbeat sends nothing")
	a.beat(ctx)
	newID := a.live.ID()
	require.NotEqual(t, oldID, newID, "registered again")
	res = a.send(ctx, job{campaign: c, row: held[0]})
	require.Equal(t, statusRelease, res.status, "a claim of the old registration sends nothing")
	calls, _, _ := p.snapshot()
	require.Empty(t, calls)
	a.flush([]result{res})
	again, err := b.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, again, 1)
	b.flush([]result{b.send(ctx, job{campaign: c, row: again[0]})})
	require.Equal(t, map[string]int{"sent": 1}, f.counts(c.ID))
}

// TestGracefulStopDeregisters: a stopped executor leaves no liveness row, and rows
// it could not settle are rescued at once by the others, not after the lease.
func TestGracefulStopDeregisters(t *testing.T) {
	t.Parallel()
	f, _, a, b, c := twoExecutors(t, 1, "skip", newFake(true))
	ctx := context.Background()
	held, err := a.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, held, 1)
	require.NoError(t, a.Stop(ctx)) // never started: nothing in flight, only the deregistration
	require.Equal(t, int64(1), f.int64(`SELECT count(*) FROM executors`))
	backdateOK(b, time.Minute)
	n, err := b.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, map[string]int{"queued": 1}, f.counts(c.ID))
}

// TestFailedHeartbeatSuspendsJudging: while this process cannot write its own
// heartbeat (the database is away), it neither judges others dead afterwards
// until a whole dead interval of good heartbeats has passed, nor starts sends.
func TestFailedHeartbeatSuspendsJudging(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accept, never answer
		}
	}()
	pool, err := pgxpool.New(context.Background(), "postgres://u:p@"+ln.Addr().String()+"/db?sslmode=disable")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	// Built without newExecutor: there is no database to check invariants in.
	clk := newClock()
	e, err := New(pool, newFake(true), Config{Heartbeat: 100 * time.Millisecond, Now: clk.Now}, nil, nil)
	require.NoError(t, err)
	e.live.Assume(7, clk.Now(), clk.Now().Add(-time.Hour))
	require.True(t, e.mayJudgeLiveness())
	require.True(t, e.sendable(7))

	e.beat(context.Background())
	require.False(t, e.mayJudgeLiveness(), "a failed heartbeat restarts the wait before judging")
	clk.Add(200 * time.Millisecond) // two heartbeats without a successful one
	require.False(t, e.sendable(7), "no send starts on a stale heartbeat")
}
