package segment_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/segment"
)

// statements records the text of every statement a pool sends, in order.
type statements struct {
	mu  sync.Mutex
	sql []string
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sql = append(s.sql, d.SQL)
	return ctx
}

func (*statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestPreviewWithoutJIT: a preview's count and sample run in a transaction that
// has turned JIT compilation off (SET LOCAL) before them: over a large account
// their cost is far above jit_above_cost, and compiling took longer than the count.
func TestPreviewWithoutJIT(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	sub := f.subscriber(1, map[string]any{"plan": "pro"})
	l := f.make.List(t, f.acct, "l")
	f.make.Members(t, f.acct, l, sub) // one to count, so the sample is looked for too

	rec := &statements{}
	cfg := f.pool.Config()
	cfg.ConnConfig.Tracer = rec
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(traced.Close)
	_, _, err = segment.NewService(traced, time.Second).Preview(ctx, f.acct,
		segment.Filter{Statuses: []string{"confirmed"}, ListIDs: []int64{l}}, 10)
	require.NoError(t, err)

	at := func(part string) int {
		return slices.IndexFunc(rec.sql, func(s string) bool { return strings.Contains(s, part) })
	}
	noJIT, count, sample := at("set_config('jit', 'off', true)"), at("name: SegmentPreviewCount"), at("name: SegmentPreviewSample")
	require.GreaterOrEqual(t, count, 0, "%q", rec.sql)
	require.GreaterOrEqual(t, sample, 0, "%q", rec.sql)
	require.GreaterOrEqual(t, noJIT, 0, "JIT is never turned off: %q", rec.sql)
	require.Less(t, noJIT, count)
	require.Less(t, noJIT, sample)
	for _, s := range rec.sql[noJIT:sample] {
		require.NotContains(t, strings.ToLower(s), "commit", "the setting is LOCAL to the preview's transaction")
	}
}
