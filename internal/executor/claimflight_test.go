package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/clock"
	"github.com/sendonce/sendonce/internal/dbtest"
)

// TestOneClaimPerCampaignAtATime: the dispatcher runs two claims at once only for
// two campaigns. Two claims of one campaign would start from the same cursor, the
// second walking over the rows the first holds, and both writing the same index
// and heap pages: measured, PostgreSQL spent about a fifth more CPU per message
// and the send was no faster (docs/performance.md, "Fewer statements at once").
// Before, a campaign alone took both claim slots whenever the queue had room.
func TestOneClaimPerCampaignAtATime(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	other := f.account("b")
	f.subscribers(acct, "r", 30, "confirmed")
	f.subscribers(other, "o", 30, "confirmed")
	first := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	e := newExecutor(t, pool, newFake(true), Config{Tick: time.Hour, Workers: 4, BatchSize: 4})
	ctx := context.Background()
	_, err := e.startDue(ctx)
	require.NoError(t, err)
	d := e.newDealer()
	t.Cleanup(func() {
		e.drainClaims(ctx, d)
		settle(t, e)
	})

	// The queue has room for two batches, but the campaign has a claim under way.
	_, err = e.deal(ctx, d)
	require.NoError(t, err)
	require.Equal(t, 1, d.inflight)
	_, err = e.deal(ctx, d)
	require.NoError(t, err)
	require.Equal(t, 1, d.inflight, "a second claim of the same campaign")
	// Once it returned, the campaign's next claim goes out.
	require.NoError(t, e.claimed(ctx, d, <-d.done))
	_, err = e.deal(ctx, d)
	require.NoError(t, err)
	require.Equal(t, 1, d.inflight)
	require.NoError(t, e.claimed(ctx, d, <-d.done))
	require.Len(t, e.jobs, 8, "two batches queued, one claim after the other")

	// Another campaign's claim runs beside one of the first campaign's.
	takeAll := takeJobs(e)
	second := f.campaign(other, nil, "skip", time.Now().Add(-time.Minute))
	_, err = e.startDue(ctx)
	require.NoError(t, err)
	d.refreshed = clock.Instant{}
	for range 2 {
		_, err = e.deal(ctx, d)
		require.NoError(t, err)
	}
	require.Equal(t, 2, d.inflight, "claims of two campaigns at once")
	var got []int64
	for range 2 {
		r := <-d.done
		got = append(got, r.c.ID)
		require.NoError(t, e.claimed(ctx, d, r))
	}
	require.ElementsMatch(t, []int64{first, second}, got)
	settle(t, e, takeAll...)
}
