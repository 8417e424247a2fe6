package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// TestLateTemporaryFailureAfterRescueAndFinish reproduces a replica cut off from the
// database for longer than the lease while its sends got 4xx: the rescuer marks the
// rows unknown (skip policy), the finalizer marks the campaign sent, then the held
// "temporary failure, retry later" results land. They must not requeue the rows: a
// queued row in a sent campaign is never claimed again, and its recipient never
// gets the message while the campaign reports sent.
func TestLateTemporaryFailureAfterRescueAndFinish(t *testing.T) {
	t.Parallel()
	clk := newClock()
	p := newFake(false)
	p.fail = func(provider.Message, int) error { return temporary("451 greylisted") }
	f, e, c := started(t, 4, "skip", p, clk)
	ctx := context.Background()
	rows, err := e.claim(ctx, c, 4)
	require.NoError(t, err)
	require.Len(t, rows, 4)
	var held []result
	for _, r := range rows {
		res := e.send(ctx, job{campaign: c, row: r})
		require.Equal(t, "queued", res.status)
		held = append(held, res)
	}

	clk.Add(61 * time.Second) // the database was away for longer than the lease
	n, err := e.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.True(t, e.finish(ctx, c.ID))
	require.Equal(t, "sent", f.status(c.ID))

	e.flush(held)
	require.Equal(t, map[string]int{"unknown": 4}, f.counts(c.ID), "the rescuer's verdict stands")
	require.Equal(t, "sent", f.status(c.ID))

	// A release of the same rows (a shutdown that could not hand them back before
	// the lease ran out) must not re-open the finished campaign either.
	refs := make([]claimRef, 0, len(rows))
	for _, r := range rows {
		refs = append(refs, claimRef{r.ID, r.Attempts})
	}
	_, err = e.release(ctx, refs)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"unknown": 4}, f.counts(c.ID))
	invariant.Require(t, f.pool, invariant.Options{Delivered: p.delivered()})
}

// TestLateResultsOnlyRecordWhatSurelyHappened: once the rescuer settled a row
// (requeued for a replay here), a late result from the old claim may record a
// delivery, but a late failure or retry changes nothing.
func TestLateResultsOnlyRecordWhatSurelyHappened(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, e, c := started(t, 3, "skip", newFake(true), clk)
	ctx := context.Background()
	rows, err := e.claim(ctx, c, 3)
	require.NoError(t, err)
	require.Len(t, rows, 3)
	clk.Add(61 * time.Second)
	_, err = e.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"queued": 3}, f.counts(c.ID))

	later := clk.Now().Add(time.Hour)
	e.flush([]result{
		{id: rows[0].ID, attempts: rows[0].Attempts, status: "queued", err: "451 late", next: later},
		{id: rows[1].ID, attempts: rows[1].Attempts, status: "failed", err: "550 late"},
		{id: rows[2].ID, attempts: rows[2].Attempts, status: "unknown", err: "timeout"},
	})
	for _, r := range rows {
		got := readSend(t, f.pool, r.ID)
		require.Equal(t, "queued", got.Status)
		require.Equal(t, "lease expired while sending", got.LastError)
		require.False(t, got.NextAttempt.After(clk.Now()), "the replay is not pushed back")
	}
}

// TestRetryInACancelledCampaignClosesTheRow: a send in flight when its campaign was
// cancelled answers "temporary failure": the row is closed, not requeued into a
// campaign nobody sends any more.
func TestRetryInACancelledCampaignClosesTheRow(t *testing.T) {
	t.Parallel()
	clk := newClock()
	p := newFake(true)
	p.fail = func(provider.Message, int) error { return temporary("451 later") }
	f, e, c := started(t, 2, "skip", p, clk)
	ctx := context.Background()
	rows, err := e.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	res := e.send(ctx, job{campaign: c, row: rows[0]})
	require.Equal(t, "queued", res.status)
	f.exec(`UPDATE campaigns SET status = 'cancelled', cancelled_at = now() WHERE id = $1`, c.ID)
	_, err = e.q.SendSweepCancelled(ctx, store.SendSweepCancelledParams{AccountID: c.AccountID, CampaignID: c.ID})
	require.NoError(t, err)

	e.flush([]result{res})
	require.Equal(t, map[string]int{"cancelled": 2}, f.counts(c.ID))
}
