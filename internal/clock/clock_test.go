package clock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A held date does not hold the pace: the timers and Instants a service polls
// with keep running while a test keeps its date still, and the database is given
// the injected date without the process's skew.
func TestHeldDateKeepsThePace(t *testing.T) {
	t.Parallel()
	held := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	c := New(func() time.Time { return held }, time.Minute)
	require.True(t, c.Injected())
	require.Equal(t, held.Add(time.Minute), c.Now(), "the date is skewed")
	require.Equal(t, held, *c.DB(), "the database is given the injected date, unskewed")

	start := c.Instant()
	require.True(t, c.Sleep(context.Background(), 20*time.Millisecond))
	require.GreaterOrEqual(t, c.Since(start), 20*time.Millisecond, "the pace ran")
	require.Equal(t, held.Add(time.Minute), c.Now(), "the date stayed")
	later := start.Add(time.Hour)
	require.True(t, start.Before(later))
	require.Equal(t, time.Hour, later.Sub(start))
	require.Greater(t, c.Until(later), 58*time.Minute)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.False(t, c.Sleep(ctx, time.Hour), "a cancelled sleep reports the context ended")
}

// The zero Clock is the wall clock and hands SQL no date: the database's now().
func TestZeroClockIsTheWall(t *testing.T) {
	t.Parallel()
	var c Clock
	require.False(t, c.Injected())
	require.Nil(t, c.DB())
	require.WithinDuration(t, time.Now(), c.Now(), time.Second)
	require.True(t, Instant{}.IsZero())
	require.False(t, c.Instant().IsZero())
	skewed := New(nil, -time.Hour)
	require.WithinDuration(t, time.Now().Add(-time.Hour), skewed.Now(), time.Second)
	require.Nil(t, skewed.DB(), "skew never reaches the database")
}
