package executor

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// captureSQL is a pgx tracer that hands the text of the claim statement (or the
// rescue's) to fn, so the EXPLAIN test explains exactly what the executor runs, sent
// alone or in a pipeline's batch.
type captureSQL func(sql string)

func (c captureSQL) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.capture(d.SQL)
	return ctx
}

func (captureSQL) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (captureSQL) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c captureSQL) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.capture(d.SQL)
}

func (captureSQL) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c captureSQL) capture(sql string) {
	if strings.Contains(sql, "SKIP LOCKED") && strings.Contains(sql, "judged") {
		c(sql)
	}
}

func leaseInterval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}
