package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/sendonce/sendonce/internal/dbtest"
)

// TestRateLimitsBoundClaims drives the dealer by hand: with one token per ten
// seconds per account, each account gets one row and then waits, while the other
// account is still served; the global limit then stops both.
func TestRateLimitsBoundClaims(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	a, b := f.account("a"), f.account("b")
	f.subscribers(a, "a", 20, "confirmed")
	f.subscribers(b, "b", 20, "confirmed")
	f.campaign(a, nil, "skip", time.Now().Add(-time.Minute))
	f.campaign(b, nil, "skip", time.Now().Add(-time.Minute))
	e := newExecutor(t, pool, newFake(true), Config{Workers: 20, BatchSize: 10,
		AccountRatePerSecond: 0.1, RatePerSecond: 0.2})
	ctx := context.Background()
	_, err := e.startDue(ctx)
	require.NoError(t, err)
	d := &dealer{byID: map[int64]*campaign{}, limiters: map[int64]*rate.Limiter{}, global: rate.NewLimiter(0.2, 2)}

	wait, err := e.deal(ctx, d)
	require.NoError(t, err)
	require.Zero(t, wait)
	wait, err = e.deal(ctx, d)
	require.NoError(t, err)
	require.Zero(t, wait)
	require.Len(t, e.jobs, 2)
	first, second := <-e.jobs, <-e.jobs
	require.NotEqual(t, first.row.AccountID, second.row.AccountID, "one row per account, dealt in turn")

	wait, err = e.deal(ctx, d)
	require.NoError(t, err)
	require.Positive(t, wait, "both budgets are spent")
	require.Empty(t, e.jobs)
	require.Equal(t, map[string]int{"sending": 2, "queued": 38}, func() map[string]int {
		m := map[string]int{}
		for _, c := range []int64{f.int64(`SELECT min(id) FROM campaigns`), f.int64(`SELECT max(id) FROM campaigns`)} {
			for k, v := range f.counts(c) {
				m[k] += v
			}
		}
		return m
	}())
}
