package executor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRetryPolicy pins the one retry schedule: base doubled per attempt after the
// first, capped; jitter within the upper half; an expired lease one attempt behind
// (the first expiry replays at once); the rescuer's table is the same schedule.
func TestRetryPolicy(t *testing.T) {
	t.Parallel()
	p := retryPolicy{base: time.Second, max: 10 * time.Second}
	for attempts, want := range map[int]time.Duration{0: 0, 1: time.Second, 2: 2 * time.Second,
		3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 30: 10 * time.Second} {
		require.Equal(t, want, p.delay(attempts), "delay after attempt %d", attempts)
		for range 50 {
			d := p.jittered(attempts)
			require.GreaterOrEqual(t, d, want/2, "attempts %d", attempts)
			require.LessOrEqual(t, d, want, "attempts %d", attempts)
		}
		require.Equal(t, p.delay(attempts-1), p.afterExpiry(attempts))
	}
	require.Zero(t, p.afterExpiry(1), "the first expiry replays at once")
	table := p.expiryTable(5)
	require.Len(t, table, 6)
	for i, iv := range table {
		require.Equal(t, p.afterExpiry(i+1).Microseconds(), iv.Microseconds, "rescuer's entry for attempts %d", i+1)
	}
}

// TestStepBackoff: the retry wait of the executor's loops doubles to its cap and
// starts over after a success.
func TestStepBackoff(t *testing.T) {
	t.Parallel()
	b := newStepBackoff(100*time.Millisecond, time.Second)
	var got []time.Duration
	for range 6 {
		got = append(got, b.next())
	}
	require.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
		800 * time.Millisecond, time.Second, time.Second}, got)
	b.reset()
	require.Equal(t, 100*time.Millisecond, b.next())
}
