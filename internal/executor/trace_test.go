package executor

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// captureSQL is a pgx tracer that hands the text of the claim statement to fn, so the
// EXPLAIN test explains exactly what the executor runs.
type captureSQL func(sql string)

func (c captureSQL) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "SKIP LOCKED") && strings.Contains(d.SQL, "judged") {
		c(d.SQL)
	}
	return ctx
}

func (captureSQL) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func leaseInterval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}
