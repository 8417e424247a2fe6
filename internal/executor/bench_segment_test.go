package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// buildSQL is a pgx tracer that keeps the text of the build's audience query.
// buildSQL keeps the text and the arguments of the first audience query the
// build runs (its first window), for the EXPLAIN at the end.
type buildSQL struct {
	sql  *string
	args *[]any
}

func (c buildSQL) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "-- name: CampaignAudiencePage") && *c.sql == "" {
		*c.sql, *c.args = d.SQL, d.Args
	}
	return ctx
}

func (buildSQL) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// BenchmarkSegmentBuild starts campaigns whose segment ($.plan == "pro") selects a
// tenth of an account of SENDONCE_BENCH_SEGMENT_ROWS subscribers (default 100,000),
// through the executor's real start path, and reports recipients built per second.
// It logs the EXPLAIN (ANALYZE, BUFFERS) of the build's audience query over one
// window of subscribers.
//
//	SENDONCE_BENCH_SEGMENT_ROWS=1000000 go test ./internal/executor -run '^$' -bench SegmentBuild -benchtime 3x -v
func BenchmarkSegmentBuild(b *testing.B) {
	rows := 100_000
	if v, err := strconv.Atoi(os.Getenv("SENDONCE_BENCH_SEGMENT_ROWS")); err == nil && v > 0 {
		rows = v
	}
	var captured string
	var capturedArgs []any
	cfg, err := pgxpool.ParseConfig(dbtest.URL(b))
	require.NoError(b, err)
	cfg.ConnConfig.Tracer = buildSQL{&captured, &capturedArgs}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(b, err)
	b.Cleanup(pool.Close)
	ctx := context.Background()
	fx := testfactory.New(pool)
	acct := fx.Account(b, "a").ID
	t0 := time.Now()
	// Plans pro / free / team in 1 / 6 / 3 parts; seats 0..49.
	plans := make([]json.RawMessage, 50) // the i-th subscriber takes plans[(i-1) % 50]
	for k := range plans {
		i := k + 1
		plan := "team"
		switch {
		case i%10 == 0:
			plan = "pro"
		case i%10 < 7:
			plan = "free"
		}
		plans[k] = json.RawMessage(fmt.Sprintf(`{"plan": %q, "seats": %d}`, plan, i%50))
	}
	fx.BulkSubscribers(b, acct, testfactory.Bulk{Prefix: "s", N: rows, Statuses: []string{"confirmed"}, Attributes: plans})
	_, err = pool.Exec(ctx, `ANALYZE subscribers`)
	require.NoError(b, err)
	b.Logf("loaded %d subscribers per account in %s", rows, time.Since(t0).Round(time.Millisecond))
	seg := fx.Segment(b, acct, testfactory.Segment{Name: "pro", Match: `$.plan == "pro"`})

	e, err := New(pool, newFake(true), Config{}, nil, nil)
	require.NoError(b, err)
	newCampaign := func() int64 {
		due, now := time.Now().Add(-time.Minute), time.Now()
		return fx.Campaign(b, acct, testfactory.Campaign{FromEmail: "news@example.com", Text: "t", Status: "approved",
			ScheduledFor: &due, ApprovedAt: &now, SegmentID: &seg})
	}
	var built int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		c := newCampaign()
		b.StartTimer()
		ok, err := e.startCampaign(ctx, c)
		require.NoError(b, err)
		require.True(b, ok)
		b.StopTimer()
		var n int64
		require.NoError(b, pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE campaign_id = $1`, c).Scan(&n))
		require.Equal(b, int64(rows/10), n)
		built += n
		b.StartTimer()
	}
	b.ReportMetric(float64(built)/b.Elapsed().Seconds(), "recipients/s")
	b.StopTimer()

	require.NotEmpty(b, captured)
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_custom_plan`); err != nil {
			return err
		}
		// The build's own first window, with the arguments it ran with.
		r, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+captured, capturedArgs...)
		if err != nil {
			return err
		}
		plan, err := pgx.CollectRows(r, pgx.RowTo[string])
		if err != nil {
			return err
		}
		b.Log("\n" + strings.Join(plan, "\n"))
		return errors.New("rollback")
	})
	require.EqualError(b, err, "rollback")
}
