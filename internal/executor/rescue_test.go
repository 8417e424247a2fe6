package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRescuerGivesUpOnAPoisonMessageAndBacksOff: a message whose send kills the
// process every time (the lease expires, nobody acknowledges) must not be requeued
// forever and at once. The first expiry replays at once, later ones wait
// BackoffBase doubled per attempt, and at MaxAttempts (3 here) the row fails.
func TestRescuerGivesUpOnAPoisonMessageAndBacksOff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		idempotent bool
		policy     string
	}{
		{"idempotent provider", true, "skip"},
		{"plain SMTP with retry", false, "retry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			f, e, c := started(t, 1, tc.policy, newFake(tc.idempotent), clk)
			ctx := context.Background()
			crash := func() int64 {
				t.Helper()
				rows, err := e.claim(ctx, c, 1)
				require.NoError(t, err)
				require.Len(t, rows, 1)
				clk.Add(61 * time.Second) // the process died holding the lease
				n, err := e.rescue(ctx)
				require.NoError(t, err)
				require.Equal(t, 1, n)
				return rows[0].ID
			}
			id := crash()
			got := readSend(t, f.pool, id)
			require.Equal(t, "queued", got.Status)
			require.False(t, got.NextAttempt.After(clk.Now()), "the first expiry replays at once: %v", got.NextAttempt)

			crash()
			got = readSend(t, f.pool, id)
			require.Equal(t, "queued", got.Status)
			require.True(t, got.NextAttempt.Equal(clk.Now().Add(time.Second)), "BackoffBase after the second: %v", got.NextAttempt)
			rows, err := e.claim(ctx, c, 1)
			require.NoError(t, err)
			require.Empty(t, rows, "not before the backoff")
			clk.Add(time.Second)

			crash()
			got = readSend(t, f.pool, id)
			require.Equal(t, "failed", got.Status, "attempts exhausted")
			require.Equal(t, 3, got.Attempts)
			require.Equal(t, "attempts exhausted (3): lease expired while sending", got.LastError)
			clk.Add(time.Hour)
			rows, err = e.claim(ctx, c, 1)
			require.NoError(t, err)
			require.Empty(t, rows)
			require.True(t, e.finish(ctx, c.ID), "a failed row does not hold the campaign open")
		})
	}
}

// TestSweepUsesTheInjectedClock: the cancel sweep stamps rows with the executor's
// clock like every other transition, so tests and replays see one time line.
func TestSweepUsesTheInjectedClock(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, e, c := started(t, 2, "skip", newFake(true), clk)
	f.exec(`UPDATE campaigns SET status = 'cancelled', cancelled_at = $2 WHERE id = $1`, c.ID, clk.Now())
	clk.Add(time.Minute)
	require.NoError(t, e.sweepCancelled(context.Background()))
	require.Equal(t, int64(2), f.int64(`SELECT count(*) FROM sends WHERE status = 'cancelled' AND updated_at = $1`, clk.Now()))
}
