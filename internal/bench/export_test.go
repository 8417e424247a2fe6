package bench

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
)

// The export bench prints, for each format, every row it imported, its rate and
// the peak memory.
func TestExportBenchPrintsBothFormats(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, ExportBench(context.Background(), dbtest.New(t), 120, "test database", &out))
	require.Regexp(t, `export csv +120 rows, [0-9.]+ MB in [0-9.]+s: [0-9]+ rows/s, peak RSS [0-9]+ MiB`, out.String())
	require.Regexp(t, `export ndjson 120 rows, `, out.String())
}
