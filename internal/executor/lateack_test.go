package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAckHeldPastTheLeaseStillRecordsTheSend: the provider accepted a message, but
// the database was down, so the completer held the ack past the lease; when the
// database came back the rescuer ran first. The ack, still fenced on the claim's
// attempts (nobody claimed the row again), must record the send: otherwise skip
// reports a delivered message as unknown, and retry delivers it a second time.
func TestAckHeldPastTheLeaseStillRecordsTheSend(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, policy, rescued string
	}{
		{"skip", "skip", "unknown"},
		{"retry", "retry", "queued"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			p := newFake(false)
			f, e, c := started(t, 1, tc.policy, p, clk)
			ctx := context.Background()
			rows, err := e.claim(ctx, c, 1)
			require.NoError(t, err)
			require.Len(t, rows, 1)
			held := e.send(ctx, job{campaign: c, row: rows[0]})
			require.Equal(t, "sent", held.status)

			clk.Add(61 * time.Second)
			_, err = e.rescue(ctx)
			require.NoError(t, err)
			require.Equal(t, tc.rescued, readSend(t, f.pool, rows[0].ID).Status)

			e.flush([]result{held})
			got := readSend(t, f.pool, rows[0].ID)
			require.Equal(t, "sent", got.Status, "the held ack records what is known")
			require.Equal(t, "pid-"+rows[0].JobID, got.ProviderID)
			again, err := e.claim(ctx, c, 1)
			require.NoError(t, err)
			require.Empty(t, again)
			_, accepted, _ := p.snapshot()
			require.Equal(t, 1, accepted[rows[0].JobID])
		})
	}
}

// TestReleaseOfARescuedRowRequeuesIt: a shutdown that could not release its unsent
// claims before their lease ran out (skip policy: the rescuer marked them unknown)
// still returns them to the queue: they were never handed to the provider.
func TestReleaseOfARescuedRowRequeuesIt(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, e, c := started(t, 1, "skip", newFake(false), clk)
	ctx := context.Background()
	rows, err := e.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	clk.Add(61 * time.Second)
	_, err = e.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, "unknown", readSend(t, f.pool, rows[0].ID).Status)

	n, err := e.release(ctx, []claimRef{{rows[0].ID, rows[0].Attempts}})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	got := readSend(t, f.pool, rows[0].ID)
	require.Equal(t, "queued", got.Status)
	require.Equal(t, 0, got.Attempts)
}
