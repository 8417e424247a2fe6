package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLateAckCannotLandOnAnotherClaim: A claims a row and its lease runs out (its
// SMTP server is slow); the rescuer requeues the row (ambiguous_policy retry) and B
// claims it. A's late answer — 451, not delivered — must not requeue B's claim,
// or B's 'sent' ack would be refused and a third claim would send a second copy.
func TestLateAckCannotLandOnAnotherClaim(t *testing.T) {
	t.Parallel()
	clk := newClock()
	p := newFake(false)
	f, e, c := started(t, 1, "retry", p, clk)
	ctx := context.Background()
	a, err := e.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, a, 1)
	clk.Add(61 * time.Second)
	n, err := e.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	clk.Add(time.Hour) // past any retry delay the rescue set
	b, err := e.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, b, 1)

	e.flush([]result{{id: a[0].ID, attempts: a[0].Attempts, status: "queued", err: "451", next: clk.Now()}})
	require.Equal(t, "sending", readSend(t, f.pool, a[0].ID).Status, "A's late ack must not touch B's claim")

	e.flush([]result{e.send(ctx, job{campaign: c, row: b[0]})})
	require.Equal(t, "sent", readSend(t, f.pool, a[0].ID).Status)
	again, err := e.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Empty(t, again, "nothing left to send")
	_, accepted, _ := p.snapshot()
	require.Equal(t, 1, accepted[a[0].JobID], "delivered more than once")
}

// TestReleaseCannotRequeueAnotherClaim: a replica shutting down hands back a row it
// claimed but never sent. If that claim was rescued and re-claimed by another
// replica meanwhile, the release must leave the other replica's live claim alone.
func TestReleaseCannotRequeueAnotherClaim(t *testing.T) {
	t.Parallel()
	clk := newClock()
	p := newFake(true)
	f, e, c := started(t, 1, "skip", p, clk)
	ctx := context.Background()
	a, err := e.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, a, 1)
	clk.Add(61 * time.Second)
	_, err = e.rescue(ctx)
	require.NoError(t, err)
	clk.Add(time.Hour)
	b, err := e.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, b, 1)

	// A stops with the row still waiting for a worker: Stop releases it.
	e.released = []claimRef{{a[0].ID, a[0].Attempts}}
	require.NoError(t, e.Stop(ctx))
	got := readSend(t, f.pool, a[0].ID)
	require.Equal(t, "sending", got.Status, "B's claim survives A's release")
	require.Equal(t, int(b[0].Attempts), got.Attempts)

	// A release of one's own claim does hand it back, uncharged.
	n, err := e.release(ctx, []claimRef{{b[0].ID, b[0].Attempts}})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	got = readSend(t, f.pool, a[0].ID)
	require.Equal(t, "queued", got.Status)
	require.Equal(t, int(b[0].Attempts)-1, got.Attempts)
}
