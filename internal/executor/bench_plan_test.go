package executor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
)

// TestClaimPlanRightAfterBuild is the case `sendonce bench` found: one large
// campaign is most of the table, its statistics were taken right after the build
// (every row queued), and a third of it has been claimed since. Ordered by id, the
// planner then walks the primary key and filters out every row already claimed, on
// every claim (37 ms instead of 1.7 ms for 500 rows half way through 100,000). The
// claim must stay on sends_claim_idx and stop at LIMIT.
func TestClaimPlanRightAfterBuild(t *testing.T) {
	t.Parallel()
	var captured string
	cfg, err := pgxpool.ParseConfig(dbtest.URL(t))
	require.NoError(t, err)
	cfg.ConnConfig.Tracer = captureSQL(func(sql string) { captured = sql })
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	f := fixture{t, pool}
	ctx := context.Background()
	acct := f.account("a")
	f.subscribers(acct, "s", 30000, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	f.start(c)
	f.exec(`ANALYZE sends`)
	e := newExecutor(t, pool, newFake(true), Config{})
	var after int64
	for range 10 {
		rows, err := e.q.SendClaimBatch(ctx, store.SendClaimBatchParams{CampaignID: c, N: 1000, Lease: leaseInterval(time.Minute)})
		require.NoError(t, err)
		require.Len(t, rows, 1000)
		after = max(after, rows[len(rows)-1].ID)
	}
	require.Contains(t, captured, "SKIP LOCKED")
	var plan []string
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "EXPLAIN "+captured, false, nil, "default", c, after, nil, int32(500), leaseInterval(time.Minute), nil, true) // $1 retry_ambiguous, $2 via_sender_id, $3 via_provider, $4 campaign, $5 after_id, $6 now, $7 n, $8 lease, $9 executor, $10 via_idempotent
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		return errors.New("rollback: leave nothing behind")
	})
	require.ErrorContains(t, err, "rollback:")
	text := strings.Join(plan, "\n")
	t.Logf("plan:\n%s", text)
	require.Contains(t, text, "Index Scan using sends_claim_idx", "plan:\n%s", text)
	require.NotContains(t, text, "Sort", "plan:\n%s", text)
	// The cursor is an index condition: the scan starts past the claimed rows'
	// dead entries instead of filtering them out one by one.
	require.Regexp(t, `Index Cond: .*ROW\(next_attempt_at, id\) > ROW`, text)
}
