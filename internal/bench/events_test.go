package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
)

// The events bench writes the account's events and reads them through every
// reader: each line says what it found, and the export every event written.
func TestEventsBenchReadsWhatItWrote(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, EventsBench(context.Background(), dbtest.New(t), 2000, "test database", &out))
	s := out.String()
	// 2,000 events: 36 transactions of a batch of 50, every tenth with 50 rows too.
	require.Contains(t, s, "fill: 2000 events per account in 36 transactions")
	for _, stats := range []string{"# as written", "# after VACUUM ANALYZE"} {
		part := s[strings.Index(s, stats):]
		require.Regexp(t, `pull 100 types=\[\] +start=[0-9.]+ \(100\) middle=[0-9.]+ \(100\) end=[0-9.]+ \(\d+\)`, part)
		require.Regexp(t, `pull 100 types=\[campaign.sent\] +start=[0-9.]+ \(0\) middle=[0-9.]+ \(0\) end=[0-9.]+ \(0\)`, part)
		// Every 50th outcome failed: one in each batch, 18 past the middle, one in the last.
		require.Regexp(t, `pull 100 types=\[send.failed\] +start=[0-9.]+ \(36\) middle=[0-9.]+ \(18\) end=[0-9.]+ \(1\)`, part)
		require.Regexp(t, `newest 50 types=\[\] +[0-9.]+ \(50\)`, part)
		require.Regexp(t, `stream types=\[campaign.sent\], the next poll +[0-9.]+ \(0\)`, part)
		require.Regexp(t, `a delivery's 100 events by id +start=[0-9.]+ \(100\) middle=[0-9.]+ \(100\) `, part)
		require.Regexp(t, `export ndjson: 2000 events, `, part)
	}
	// Both tenants' events, rows and batches.
	require.Regexp(t, `retention of every event rows: 400 in 2 statements, `, s)
	require.Regexp(t, `retention of every event batches: 72 in 2 statements, `, s)
}
