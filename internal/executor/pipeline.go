package executor

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// onIndexPaths is one round trip for the next statement run through it: a
// pipeline that sends SendPlanIndexed (queued here, answered with the batch) and
// then that statement, so its cached plan looks sends up by index.
func (e *Executor) onIndexPaths(ctx context.Context) *store.Queries {
	return e.planned(ctx, (*store.Queries).SendPlanIndexed)
}

// planned is one round trip for the next statement run through it, with the plan
// setting (ClaimPlanGeneric, SendPlanIndexed, SendPlanLinear) local to it.
func (e *Executor) planned(ctx context.Context, setting func(*store.Queries, context.Context) error) *store.Queries {
	return Planned(ctx, e.pool, setting)
}

// Planned is the executor's one round trip on pool for a caller outside it (the
// bench's raw claim and acknowledge loop, which measures these statements as the
// executor runs them): the next statement run through it, with setting.
func Planned(ctx context.Context, pool *pgxpool.Pool, setting func(*store.Queries, context.Context) error) *store.Queries {
	q := store.New(&pipeline{pool: pool})
	_ = setting(q, ctx) // a pipeline's Exec only queues: no error here
	return q
}

// pipeline is a store.DBTX that sends the statements given to Exec together with
// the next Query, in one batch: one round trip and one implicit transaction, so a
// transaction-local setting (ClaimPlanGeneric, SendPlanIndexed) applies to that query
// alone, also through a transaction pooler. Only Exec (queued, answered at once with
// an empty tag), Query and QueryRow are supported; a pipeline serves one of the two.
type pipeline struct {
	pool  *pgxpool.Pool
	batch pgx.Batch
}

var errPipelineUse = errors.New("executor: pipeline supports queued Exec then one Query")

func (p *pipeline) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	p.batch.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

// Query sends the queued statements and sql in one batch and returns sql's rows.
// The batch's end (the implicit transaction's commit) is read when the rows are
// exhausted, and its error reported by Err: rows whose commit failed are never
// taken as claimed.
func (p *pipeline) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	queued := p.batch.Len()
	p.batch.Queue(sql, args...)
	br := p.pool.SendBatch(ctx, &p.batch)
	for range queued {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, sentBatchError(err)
		}
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, sentBatchError(err)
	}
	return &pipelineRows{Rows: rows, br: br}, nil
}

// QueryRow is Query for one row: Scan reads it, then the batch's end.
func (p *pipeline) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := p.Query(ctx, sql, args...)
	if err != nil {
		return errRow{err}
	}
	return pipelineRow{rows}
}

type pipelineRow struct{ rows pgx.Rows }

func (r pipelineRow) Scan(dest ...any) error {
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

func (p *pipeline) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	return 0, errPipelineUse
}

// pipelineRows closes the batch once its last rows are read, so Err includes
// the batch's own end.
type pipelineRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

func (r *pipelineRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.finish()
	return false
}

func (r *pipelineRows) finish() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.br.Close()
}

func (r *pipelineRows) Close() { r.finish() }

func (r *pipelineRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return sentBatchError(err)
	}
	return sentBatchError(r.err)
}

// batchSent marks an error met after a batch was handed to the connection. Such
// an error can say "safe to retry" of its own step — pgx answers a step after the
// connection died with "conn closed", which is safe to retry — while an earlier
// step of the same batch (the claim) reached the server and may have committed.
// It is never safe to retry, so the claim's outcome counts as unknown
// (liveness.OutcomeUnknown) and its rows are released if they were claimed unseen.
type batchSent struct{ err error }

func (e batchSent) Error() string     { return e.err.Error() }
func (e batchSent) Unwrap() error     { return e.err }
func (e batchSent) SafeToRetry() bool { return false }

// sentBatchError wraps err as batchSent, unless it is nil or the server's own
// answer (a PgError: the statement was refused, nothing committed).
func sentBatchError(err error) error {
	if err == nil || postgres.FromServer(err) {
		return err
	}
	return batchSent{err}
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
