package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
)

// TestSendWindowHoldsRows runs a campaign with a sending window (mon–fri
// 09:00–17:00 Berlin) through the real executor on an injected clock: started on
// a Saturday nothing is claimed, nor on Monday at 08:59 Berlin time, nor by an
// executor restarted while the window is shut; at 09:00 every row goes out once
// and the campaign finishes.
func TestSendWindowHoldsRows(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	// Saturday 2030-06-08, 12:00 UTC (14:00 in Berlin, summer time).
	clk := &heldClock{t: time.Date(2030, 6, 8, 12, 0, 0, 0, time.UTC)}
	acct := f.account("a")
	f.subscribers(acct, "w", 25, "confirmed")
	c := f.campaign(acct, nil, "skip", clk.Now())
	f.exec(`UPDATE campaigns SET send_window = '{"days": ["mon","tue","wed","thu","fri"], "start": "09:00", "end": "17:00",
		"time_zone": "Europe/Berlin"}' WHERE id = $1`, c)
	p := newFake(true)
	cfg := Config{Now: clk.Now, Lease: time.Minute, MaxAttempts: 3, BackoffBase: time.Second,
		BackoffMax: time.Minute, Workers: 4, BatchSize: 10, Poll: 20 * time.Millisecond}
	first := newExecutor(t, pool, p, cfg)
	runCtx, cancel := context.WithCancel(ctx)
	_ = first.Start(runCtx)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cancel()
			require.NoError(t, first.Stop(context.Background()))
		}
	})
	waitStarted(t, f, first, c)
	require.Equal(t, 25, f.counts(c)["queued"])
	// Nothing to wait on: a shut window makes no claim (no signal); ten polls pass.
	time.Sleep(200 * time.Millisecond)
	require.Zero(t, f.counts(c)["sent"])
	require.Zero(t, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status <> 'queued'`, c))

	// Monday 08:59 in Berlin (06:59 UTC), and an executor restarted while shut.
	clk.set(time.Date(2030, 6, 10, 6, 59, 0, 0, time.UTC))
	cancel()
	require.NoError(t, first.Stop(context.Background()))
	stopped = true
	second := newExecutor(t, pool, p, cfg)
	runUntil(t, second)
	time.Sleep(200 * time.Millisecond)
	require.Zero(t, f.counts(c)["sent"], "nothing before 09:00 in Berlin")
	require.Equal(t, "sending", f.status(c), "a campaign waiting for its window stays sending")

	clk.Add(time.Minute)
	waitSent(t, f, second, c)
	require.Equal(t, 25, f.counts(c)["sent"])
	for job, calls := range p.delivered() {
		require.Equal(t, 1, calls, job)
	}
	require.Len(t, p.delivered(), 25)
}
