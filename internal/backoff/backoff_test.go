package backoff

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestExponential: base doubled per failure after the first, capped; nothing
// before a failure; no overflow for a huge count.
func TestExponential(t *testing.T) {
	t.Parallel()
	e := Exponential{Base: time.Second, Max: 10 * time.Second}
	for n, want := range map[int]time.Duration{-1: 0, 0: 0, 1: time.Second, 2: 2 * time.Second,
		3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 1 << 30: 10 * time.Second} {
		require.Equal(t, want, e.Delay(n), "after failure %d", n)
	}
	require.Zero(t, Exponential{Max: time.Second}.Delay(3), "no base, no wait")
}

// TestSteps: the n-th step after the n-th failure, the last one repeating.
func TestSteps(t *testing.T) {
	t.Parallel()
	s := Steps{time.Second, time.Minute, time.Hour}
	require.Zero(t, s.Delay(0))
	require.Equal(t, time.Second, s.Delay(1))
	require.Equal(t, time.Hour, s.Delay(3))
	require.Equal(t, time.Hour, s.Delay(100))
	require.Equal(t, time.Hour+time.Minute+time.Second, s.Total())
	require.Zero(t, Steps(nil).Delay(1))
}

// TestJitter stays within its bounds and reaches across them.
func TestJitter(t *testing.T) {
	t.Parallel()
	d := 10 * time.Second
	lo, hi := d, time.Duration(0)
	for range 2000 {
		j := Jitter(d, 0.8, 1.2)
		require.GreaterOrEqual(t, j, 8*time.Second)
		require.LessOrEqual(t, j, 12*time.Second)
		lo, hi = min(lo, j), max(hi, j)
	}
	require.Less(t, lo, 9*time.Second, "spread low")
	require.Greater(t, hi, 11*time.Second, "spread high")
	require.Zero(t, Jitter(0, 0.5, 1))
	require.Equal(t, d, Jitter(d, 1, 1))
	j := Jitter(time.Nanosecond, 0.5, 1)
	require.True(t, j == 0 || j == time.Nanosecond)
}

// TestStep doubles to its cap and starts over after a success.
func TestStep(t *testing.T) {
	t.Parallel()
	s := NewStep(Exponential{Base: 100 * time.Millisecond, Max: time.Second})
	var got []time.Duration
	for range 6 {
		got = append(got, s.Next())
	}
	require.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
		800 * time.Millisecond, time.Second, time.Second}, got)
	for range 1000 {
		s.Next()
	}
	require.Equal(t, time.Second, s.Next(), "a long outage stays at the cap")
	s.Reset()
	require.Equal(t, 100*time.Millisecond, s.Next())
}
