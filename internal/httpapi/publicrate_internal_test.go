package httpapi

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The public limiter's memory stays bounded however many keys it sees, and a
// key's spent bucket is kept while quiet ones are forgotten.
func TestKeyedLimitsBounded(t *testing.T) {
	t.Parallel()
	l := newKeyedLimits(0.001, 2)
	now := time.Unix(1_700_000_000, 0)
	require.Zero(t, l.take("busy", now))
	require.Zero(t, l.take("busy", now))
	require.Positive(t, l.take("busy", now), "the burst is spent")
	for i := range 3 * maxTrackedAddrs {
		require.Zero(t, l.take("k"+strconv.Itoa(i), now))
		require.LessOrEqual(t, l.tracked(), maxTrackedAddrs)
	}
	off := newKeyedLimits(0, 1)
	for range 5 {
		require.Zero(t, off.take("x", now))
	}
	require.Zero(t, off.tracked())
}
