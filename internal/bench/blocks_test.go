package bench_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/bench"
)

// The blocks bench renders a 50-block design and prints its figures.
func TestBlocksBench(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, bench.BlocksBench(200, 2, &out))
	require.Contains(t, out.String(), "50-block design")
	require.Contains(t, out.String(), "blocks/HTML")
	require.Contains(t, out.String(), "a fresh copy of the output alone")
}
