package bench_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/bench"
)

// The blocks bench builds a 50-block design and its hand-typed HTML both ways
// (reused buffers, fresh strings) and prints its figures.
func TestBlocksBench(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, bench.BlocksBench(200, 2, &out))
	require.Contains(t, out.String(), "50-block design")
	require.Contains(t, out.String(), "blocks/HTML")
	require.Contains(t, out.String(), "send path (BuildInto, reused buffers)")
	require.Contains(t, out.String(), "a fresh string per message (Build)")
}
