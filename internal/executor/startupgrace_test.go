package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/store"
)

// TestUnownedRowsRescuedAfterStartupGrace: a release before liveness stamps its
// claims with no executor. When it is killed during a rolling upgrade, its rows
// used to wait for their whole lease (two minutes: the upgrade tried from outside
// took 122 s for a campaign that needed a few). Now a row with no executor whose
// claim is older than StartupGrace is rescued as a dead executor's, on the
// injected clock: not a second before the grace, at once after it, long before the
// lease; rows of a registered executor that beats stay.
func TestUnownedRowsRescuedAfterStartupGrace(t *testing.T) {
	t.Parallel()
	f, clk, a, b, c := twoExecutors(t, 6, "skip", newFake(true))
	ctx := context.Background()
	// The old binary's claim: the same rows, no executor id.
	now := clk.Now()
	old, err := store.New(f.pool).SendClaimBatch(ctx, store.SendClaimBatchParams{Now: &now, CampaignID: c.ID, N: 3,
		Lease: leaseInterval(2 * time.Minute), ViaProvider: "default", ViaIdempotent: true})
	require.NoError(t, err)
	require.Len(t, old, 3)
	require.Nil(t, old[0].ExecutorID)
	held, err := a.claim(ctx, c, 3)
	require.NoError(t, err)
	require.Len(t, held, 3)

	backdateOK(b, time.Minute) // b has beaten for a while: it may judge
	clk.Add(b.cfg.StartupGrace - time.Second)
	a.beat(ctx)
	b.beat(ctx)
	n, err := b.rescue(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "within the grace an old process may still be sending them")

	clk.Add(2 * time.Second)
	a.beat(ctx)
	b.beat(ctx)
	n, err = b.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n, "the unowned rows, not a's")
	require.Equal(t, map[string]int{"queued": 3, "sending": 3}, f.counts(c.ID))
	for _, r := range old {
		s := readSend(t, f.pool, r.ID)
		require.Equal(t, "queued", s.Status)
		require.Equal(t, "executor stopped while sending", s.LastError)
	}
	for _, r := range held {
		require.Equal(t, "sending", readSend(t, f.pool, r.ID).Status)
	}
	var res []result
	for _, r := range held {
		res = append(res, a.send(ctx, job{campaign: c, row: r}))
	}
	a.flush(res)
}

// TestStartupGraceNeedsLivenessJudgement: an executor that may not judge liveness
// yet (just started, or just back from an outage) leaves unowned rows alone too.
func TestStartupGraceNeedsLivenessJudgement(t *testing.T) {
	t.Parallel()
	f, clk, _, b, c := twoExecutors(t, 2, "skip", newFake(true))
	ctx := context.Background()
	now := clk.Now()
	_, err := store.New(f.pool).SendClaimBatch(ctx, store.SendClaimBatchParams{Now: &now, CampaignID: c.ID, N: 2,
		Lease: leaseInterval(2 * time.Minute), ViaProvider: "default", ViaIdempotent: true})
	require.NoError(t, err)
	clk.Add(b.cfg.StartupGrace + time.Second)
	id, beatAt, _ := b.live.State()
	b.live.Assume(id, beatAt, clk.Now())
	b.beat(ctx)
	require.False(t, b.mayJudgeLiveness())
	n, err := b.rescue(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, map[string]int{"sending": 2}, f.counts(c.ID))
	clk.Add(2 * time.Minute) // the lease, as before
	b.beat(ctx)
	n, err = b.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
}
