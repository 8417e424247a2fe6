package executor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/clock"
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
	text := explain(t, pool, nil, captured, false, nil, "default", c, after, nil, int32(500), leaseInterval(time.Minute), nil, true) // $1 retry_ambiguous, $2 via_sender_id, $3 via_provider, $4 campaign, $5 after_id, $6 now, $7 n, $8 lease, $9 executor, $10 via_idempotent
	t.Logf("plan:\n%s", text)
	require.Contains(t, text, "Index Scan using sends_claim_idx", "plan:\n%s", text)
	require.NotContains(t, text, "Sort", "plan:\n%s", text)
	// The cursor is an index condition: the scan starts past the claimed rows'
	// dead entries instead of filtering them out one by one.
	require.Regexp(t, `Index Cond: .*ROW\(next_attempt_at, id\) > ROW`, text)
}

// TestClaimPlanCachedOnAnEmptyTable is the stall `sendonce bench --grow` found: the
// claim runs on a generic plan cached per connection (ClaimPlanGeneric), and a plan
// made while sends is empty (a claim of a campaign not yet built, or of one whose
// rows retention deleted and vacuum truncated) is a sequential scan. Inserts do not
// invalidate cached plans, so after a build of a large campaign every claim on that
// connection read the whole table (8.2 s per claim of 50 rows out of 1,000,000)
// until autovacuum's ANALYZE of sends replaced the plan. The cached plan must use
// sends_claim_idx whatever the table's size when it was made.
func TestClaimPlanCachedOnAnEmptyTable(t *testing.T) {
	t.Parallel()
	f, one := planFixture(t)
	ctx := context.Background()
	acct := f.account("a")
	f.subscribers(acct, "s", 20000, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	e := newExecutor(t, one, newFake(true), Config{})
	cmp := &campaign{CampaignListSendingRow: store.CampaignListSendingRow{ID: c}}
	rows, err := e.claimAfter(ctx, cmp, &route{kind: "default"}, 50, 0)
	require.NoError(t, err)
	require.Empty(t, rows, "the campaign is not sending yet: the claim only plans")
	require.EqualValues(t, 20000, f.start(c))

	text := cachedPlan(t, f, one, "SendClaimBatch", (*store.Queries).ClaimPlanGeneric,
		fmt.Sprintf(`false, NULL, 'default', %d, 0, NULL, 50, '1 minute', NULL, true`, c))
	require.Contains(t, text, "Index Scan using sends_claim_idx", "plan:\n%s", text)
	requireSendsProbed(t, text)
	require.NotContains(t, text, "Sort", "plan:\n%s", text)
	require.Regexp(t, `Index Cond: .*ROW\(next_attempt_at, id\) > ROW`, text)
	// And the claim itself: 50 rows of the 20,000.
	rows, err = e.claimAfter(ctx, cmp, &route{kind: "default"}, 50, 0)
	require.NoError(t, err)
	require.Len(t, rows, 50)
}

// TestAckPlanCachedWhileSmall: the acknowledgement too runs on a generic plan once
// PostgreSQL has made a few custom ones, cached per connection. Made while sends
// held one small campaign, that plan is a hash join over a sequential scan of the
// table, and every acknowledgement of a large campaign built later would read the
// whole table until sends is next analyzed. The cached plan must look the rows up by
// their primary key whatever the table's size when it was made.
func TestAckPlanCachedWhileSmall(t *testing.T) {
	t.Parallel()
	f, one := planFixture(t)
	ctx := context.Background()
	acct := f.account("a")
	f.subscribers(acct, "first", 40, "confirmed")
	small := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	require.EqualValues(t, 40, f.start(small))
	e := newExecutor(t, one, newFake(true), Config{})
	ack := func(id int64, n int) {
		c := sendingCampaign(t, e, id)
		rows, err := e.claim(ctx, c, n)
		require.NoError(t, err)
		require.Len(t, rows, n)
		results := make([]result, 0, n)
		for _, r := range rows {
			results = append(results, e.send(ctx, job{campaign: c, row: r}))
		}
		e.flush(results)
	}
	// More acknowledgements than the custom plans PostgreSQL makes before it
	// weighs the generic one (five).
	for range 15 {
		ack(small, 2)
	}
	f.subscribers(acct, "later", 30000, "confirmed")
	big := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	require.EqualValues(t, 30040, f.start(big))
	first := f.int64(`SELECT min(id) FROM sends WHERE campaign_id = $1`, big)

	text := cachedPlan(t, f, one, "SendAckMany", (*store.Queries).SendPlanIndexed,
		fmt.Sprintf(`ARRAY[%d, %d]::bigint[], '{1,1}', '{sent,sent}', '{p,p}', '{"",""}', '{0,0}', '{f,f}', NULL`, first, first+1))
	requireSendsProbed(t, text)
	require.Contains(t, text, "Index Scan using sends_pkey on sends", "plan:\n%s", text)
	ack(big, 50)
	require.EqualValues(t, 50, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'sent'`, big))
}

// TestMessagePlansCachedWhileSmall: a message stream's claim and the sweep over the
// streams run on plans PostgreSQL caches per connection too; made while sends held a
// few messages they scan the whole table, which a password reset sent after a large
// campaign was built would wait for. Both must stay on sends_claim_idx.
func TestMessagePlansCachedWhileSmall(t *testing.T) {
	t.Parallel()
	f, one := planFixture(t)
	ctx := context.Background()
	acct := f.account("a")
	e := newExecutor(t, one, newFake(true), Config{})
	for i := range 8 {
		f.message(acct, nil, fmt.Sprintf("m%d", i), fmt.Sprintf("r%d@example.com", i))
	}
	d := &dealer{byID: map[int64]*campaign{}}
	c := streamOf(t, e, d, acct)
	for range 8 {
		rows, err := e.claimMessages(ctx, c, e.routeOf(c), 1)
		require.NoError(t, err)
		require.Len(t, rows, 1)
		e.streamsSwept = clock.Instant{} // due again
		require.NoError(t, e.wakeStreams(ctx, d))
	}
	f.subscribers(acct, "later", 30000, "confirmed")
	big := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	require.EqualValues(t, 30000, f.start(big))

	text := cachedPlan(t, f, one, "MessageClaimBatch", (*store.Queries).SendPlanIndexed,
		fmt.Sprintf(`false, NULL, 'default', %d, NULL, 1, '1 minute', NULL, true`, c.ID))
	requireSendsProbed(t, text)
	require.Contains(t, text, "Index Scan using sends_claim_idx", "plan:\n%s", text)
	text = cachedPlan(t, f, one, "MessageStreamsDue", (*store.Queries).SendPlanIndexed, `NULL`)
	requireSendsProbed(t, text)
	require.Contains(t, text, "sends_claim_idx", "plan:\n%s", text)
}

// planFixture is a test database with two pools on it: the fixture's, and one of a
// single connection, whose statements reuse the plans its earlier ones cached. sends
// starts empty and vacuumed to no pages (as after deletes that emptied it), and no
// autovacuum replaces a cached plan behind the test's back.
func planFixture(t *testing.T) (fixture, *pgxpool.Pool) {
	t.Helper()
	url := dbtest.URL(t)
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.MaxConns = 1
	one, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(one.Close)
	f := fixture{t, pool}
	f.exec(`ALTER TABLE sends SET (autovacuum_enabled = false)`)
	f.exec(`VACUUM ANALYZE sends`)
	return f, one
}

// cachedPlan is the plan the next execution of the sqlc query name on one's
// connection runs, after the executor's plan setting: EXPLAIN EXECUTE of its
// prepared statement with args (SQL literals).
func cachedPlan(t *testing.T, f fixture, one *pgxpool.Pool, name string, setting func(*store.Queries, context.Context) error, args string) string {
	t.Helper()
	require.Zero(t, f.int64(`SELECT count(*) FROM pg_stat_user_tables WHERE relname = 'sends' AND (last_autoanalyze IS NOT NULL OR last_autovacuum IS NOT NULL)`),
		"sends was analyzed since the plan was made")
	ctx := context.Background()
	var stmt string // the one connection's prepared statement
	require.NoError(t, one.QueryRow(ctx, `SELECT name FROM pg_prepared_statements WHERE starts_with(statement, $1)`,
		"-- name: "+name+" ").Scan(&stmt))
	text := explain(t, one, func(tx pgx.Tx) error { return setting(store.New(tx), ctx) },
		fmt.Sprintf(`EXPLAIN EXECUTE %s(%s)`, pgx.Identifier{stmt}.Sanitize(), args))
	t.Logf("%s plan:\n%s", name, text)
	return text
}

// requireSendsProbed fails unless every scan of sends in plan looks its rows up by
// an index condition: a sequential scan, or an index scan with no condition (the
// whole index), reads every row of the table.
func requireSendsProbed(t *testing.T, plan string) {
	t.Helper()
	lines := strings.Split(plan, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "Scan") || !strings.Contains(l, " on sends ") {
			continue
		}
		require.NotContains(t, l, "Seq Scan", "plan:\n%s", plan)
		cond := false
		for _, d := range lines[i+1:] {
			d = strings.TrimSpace(d)
			if strings.HasPrefix(d, "->") || strings.HasPrefix(d, "CTE ") || strings.HasPrefix(d, "InitPlan") || strings.HasPrefix(d, "SubPlan") {
				break
			}
			if strings.HasPrefix(d, "Index Cond:") || strings.HasPrefix(d, "Recheck Cond:") {
				cond = true
			}
		}
		require.True(t, cond, "a whole-table scan of sends: %s\nplan:\n%s", strings.TrimSpace(l), plan)
	}
}
