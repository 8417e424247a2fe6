package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
)

// rateSetup starts one campaign of 20 recipients in each of two accounts and
// returns an executor with cfg whose claim statements are counted. Its clock
// stands still, so the rate budgets change only as the test spends them.
func rateSetup(t *testing.T, cfg Config) (fixture, *Executor, *int) {
	t.Helper()
	cfg.Now = newClock().Now
	pool := dbtest.New(t)
	f := fixture{t, pool}
	a, b := f.account("a"), f.account("b")
	f.subscribers(a, "a", 20, "confirmed")
	f.subscribers(b, "b", 20, "confirmed")
	f.campaign(a, nil, "skip", cfg.Now().Add(-time.Minute))
	f.campaign(b, nil, "skip", cfg.Now().Add(-time.Minute))
	e := newExecutor(t, pool, newFake(true), cfg)
	claims := 0
	e.observeClaim = func(claim func() []store.SendClaimBatchRow) []store.SendClaimBatchRow {
		claims++
		return claim()
	}
	_, err := e.startDue(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { settle(t, e) })
	return f, e, &claims
}

// dealSync is one step of the dispatch loop: a deal, and the result of the claim
// it launched taken in.
func dealSync(ctx context.Context, e *Executor, d *dealer) (time.Duration, error) {
	wait, err := e.deal(ctx, d)
	for d.inflight > 0 {
		if cerr := e.claimed(ctx, d, <-d.done); cerr != nil && err == nil {
			err = cerr
		}
	}
	return wait, err
}

// settle acknowledges the jobs a test dealt by hand as sent, so the test's rows
// end in a state the shared invariant can judge.
func settle(t *testing.T, e *Executor, taken ...job) {
	t.Helper()
	var res []result
	for _, j := range append(taken, takeJobs(e)...) {
		res = append(res, e.send(context.Background(), j))
	}
	e.flush(res)
}

// takeJobs takes every job waiting in the prefetch queue, as workers would, which
// makes room for the next claims.
func takeJobs(e *Executor) []job {
	var jobs []job
	for len(e.jobs) > 0 {
		jobs = append(jobs, <-e.jobs)
		e.slotsFreed(1)
	}
	return jobs
}

// TestAccountRateLimitDealsEachAccountInTurn drives the dealer as dispatch builds
// it: with one token per ten seconds per account, each account gets one row and
// then waits, while the other account is still served.
func TestAccountRateLimitDealsEachAccountInTurn(t *testing.T) {
	t.Parallel()
	_, e, claims := rateSetup(t, Config{Workers: 20, BatchSize: 10, AccountRatePerSecond: 0.1})
	ctx := context.Background()
	d := e.newDealer()
	for range 2 {
		wait, err := dealSync(ctx, e, d)
		require.NoError(t, err)
		require.Zero(t, wait)
	}
	require.Len(t, e.jobs, 2)
	first, second := <-e.jobs, <-e.jobs
	require.NotEqual(t, first.row.AccountID, second.row.AccountID, "one row per account, dealt in turn")
	e.jobs <- first
	e.jobs <- second

	wait, err := dealSync(ctx, e, d)
	require.NoError(t, err)
	require.Positive(t, wait, "both accounts' budgets are spent")
	require.Len(t, e.jobs, 2)
	require.Equal(t, 2, *claims)
}

// TestGlobalRateLimitStopsEveryAccount: the process-wide limit, as dispatch builds
// it, stops the dealing for all accounts once its budget is spent.
func TestGlobalRateLimitStopsEveryAccount(t *testing.T) {
	t.Parallel()
	_, e, claims := rateSetup(t, Config{Workers: 20, BatchSize: 10, RatePerSecond: 0.1})
	ctx := context.Background()
	d := e.newDealer()
	wait, err := dealSync(ctx, e, d)
	require.NoError(t, err)
	require.Zero(t, wait)
	require.Len(t, e.jobs, 1)
	wait, err = dealSync(ctx, e, d)
	require.NoError(t, err)
	require.Positive(t, wait)
	require.Len(t, e.jobs, 1, "neither account is served")
	require.Equal(t, 1, *claims)
}

// TestRateBudgetIsClaimedInBatches: under a rate limit the budget accumulates to a
// whole claim and goes out in one statement, instead of a claim per token that
// trickles in; the bucket holds two claims, so no more than two batches go out on
// top of the rate.
func TestRateBudgetIsClaimedInBatches(t *testing.T) {
	t.Parallel()
	_, e, claims := rateSetup(t, Config{Workers: 20, BatchSize: 10, RatePerSecond: 500})
	ctx := context.Background()
	d := e.newDealer()
	require.Equal(t, 20, d.global.Burst(), "the bucket holds two claims")
	for range 2 {
		wait, err := dealSync(ctx, e, d)
		require.NoError(t, err)
		require.Zero(t, wait)
	}
	require.Len(t, e.jobs, 20, "two full batches, one statement each")
	settle(t, e)
	wait, err := dealSync(ctx, e, d)
	require.NoError(t, err)
	require.Positive(t, wait, "the next claim waits for a batch's worth of budget")
	require.Equal(t, 20*time.Millisecond, wait, "10 tokens at 500/s")
	require.Equal(t, 2, *claims)
}
