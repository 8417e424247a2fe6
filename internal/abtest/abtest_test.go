package abtest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPValue(t *testing.T) {
	t.Parallel()
	// 12 % against 10 % of 1,000 each: z = 1.43, not significant.
	require.InDelta(t, 0.1529, PValue(120, 1000, 100, 1000), 1e-4)
	require.InDelta(t, PValue(120, 1000, 100, 1000), PValue(100, 1000, 120, 1000), 1e-12, "symmetric")
	// 40 of 200 against 80 of 200: z = 4.36.
	require.InDelta(t, 1.275e-5, PValue(40, 200, 80, 200), 1e-8)
	require.Equal(t, 1.0, PValue(0, 0, 5, 10), "nothing sent: no hint")
	require.Equal(t, 1.0, PValue(0, 50, 0, 50), "no variation")
}

func TestLeader(t *testing.T) {
	t.Parallel()
	stats := []Stats{{Variant: 1, Sent: 100, Clicked: 5, Opened: 50}, {Variant: 2, Sent: 50, Clicked: 5, Opened: 10},
		{Variant: 3, Sent: 100, Clicked: 10, Opened: 20}}
	require.Equal(t, int16(2), Leader(stats, MetricClicks), "rates, not counts: 10 % ties 10 %, the earlier wins")
	require.Equal(t, int16(1), Leader(stats, MetricOpens))
	require.Equal(t, int16(1), Leader(nil, MetricClicks))
	require.Equal(t, "C", Name(3))
	require.Equal(t, int16(5), Index("E"))
	require.Zero(t, Index("F"))
	require.Zero(t, Index("a"))
}
