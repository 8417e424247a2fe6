package executor

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/clock"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
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
	require.NotContains(t, text, "Sort Key: s.next_attempt_at", "the claim must read the index in its order and stop at LIMIT:\n%s", text)
	require.Regexp(t, `Index Cond: .*ROW\(next_attempt_at, id\) > ROW`, text)
	// The claimed rows are matched to their verdicts once each (not a nested
	// loop over the verdicts for every row: quadratic in the batch).
	text = cachedPlan(t, f, one, "SendClaimBatch", (*store.Queries).ClaimPlanGeneric,
		fmt.Sprintf(`false, NULL, 'default', %d, 0, NULL, 150, '1 minute', NULL, true`, c), "ANALYZE", "TIMING OFF")
	require.Regexp(t, `Update on sends .*actual rows=150 `, text)
	for _, s := range scansOf(text, "judged") {
		require.Equal(t, 1, s.loops, "the verdicts read again for every claimed row:\n%s", text)
	}
	requireSendsProbed(t, text)
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
	acct := f.account("a")
	f.subscribers(acct, "first", 40, "confirmed")
	small := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	require.EqualValues(t, 40, f.start(small))
	e := newExecutor(t, one, newFake(true), Config{})
	// More acknowledgements than the custom plans PostgreSQL makes before it
	// weighs the generic one (five).
	for range 15 {
		claimAndAck(t, e, small, 2)
	}
	f.subscribers(acct, "later", 30000, "confirmed")
	big := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	require.EqualValues(t, 30040, f.start(big))
	first := f.int64(`SELECT min(id) FROM sends WHERE campaign_id = $1`, big)

	text := cachedPlan(t, f, one, "SendAckMany", (*store.Queries).SendPlanLinear,
		fmt.Sprintf(`ARRAY[%d, %d]::bigint[], '{1,1}', '{sent,sent}', '{p,p}', '{"",""}', '{0,0}', '{f,f}', NULL`, first, first+1))
	requireSendsProbed(t, text)
	require.Contains(t, text, "Index Scan using sends_pkey on sends", "plan:\n%s", text)
	claimAndAck(t, e, big, 50)
	require.EqualValues(t, 50, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'sent'`, big))
}

// TestAckPlanLinearInItsRows: with statistics that say almost no row of sends is
// in flight (a table of settled campaigns), the acknowledgement's plan expected one
// row from its lookup of the acknowledged ids and joined them to the results in a
// nested loop that read all the results for each row: 250,000 comparisons for an
// acknowledgement of 500, 60 ms, so the next one gathered more rows and took
// longer (`sendonce bench --grow` sent 1.9x slower beside 20,000,000 settled rows).
// The rows must be matched to their results once each, whatever their number.
func TestAckPlanLinearInItsRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := settledPlans(t)
	for range 8 {
		claimAndAck(t, s.e, s.settled, 1) // the plans again, on those statistics
	}
	c := sendingCampaign(t, s.e, s.next)
	rows, err := s.e.claim(ctx, c, 500)
	require.NoError(t, err)
	require.Len(t, rows, 500)
	ids, _ := idsAndAttempts(rows)
	list := func(v string) string { return sqlArray(slices.Repeat([]string{v}, len(rows))) }
	text := cachedPlan(t, s.f, s.one, "SendAckMany", (*store.Queries).SendPlanLinear, fmt.Sprintf(`ARRAY[%s]::bigint[], %s, %s, %s, %s, %s, %s, NULL`,
		ids, list("1"), list("sent"), list("p"), list(`""`), list("0"), list("f")), "ANALYZE", "TIMING OFF")
	requireLinearIn(t, text, 500)
	ackAll(ctx, s.e, c, rows)
	require.EqualValues(t, 500, s.f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'sent'`, s.next))
}

// settledFixture is a planFixture whose sends hold a campaign of 6,000 rows all sent
// through e in acknowledgements of 500, analyzed that way (a table of settled
// campaigns), and a next campaign of 6,000 started.
type settledFixture struct {
	f             fixture
	one           *pgxpool.Pool
	e             *Executor
	settled, next int64
}

func settledPlans(t *testing.T) settledFixture {
	t.Helper()
	f, one := planFixture(t)
	acct := f.account("a")
	f.subscribers(acct, "s", 6000, "confirmed")
	s := settledFixture{f: f, one: one, settled: f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))}
	require.EqualValues(t, 6000, f.start(s.settled))
	s.e = newExecutor(t, one, newFake(true), Config{})
	for range 11 {
		claimAndAck(t, s.e, s.settled, 500)
	}
	f.exec(`ANALYZE sends`) // every row sent
	s.next = f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	require.EqualValues(t, 6000, f.start(s.next))
	return s
}

// idsAndAttempts are the claimed rows' ids and attempts as SQL lists.
func idsAndAttempts(rows []store.SendClaimBatchRow) (string, string) {
	ids, attempts := make([]string, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		ids[i], attempts[i] = strconv.FormatInt(r.ID, 10), strconv.FormatInt(int64(r.Attempts), 10)
	}
	return strings.Join(ids, ","), strings.Join(attempts, ",")
}

// sqlArray is an array literal of vs.
func sqlArray(vs []string) string { return "'{" + strings.Join(vs, ",") + "}'" }

// requireLinearIn fails unless an analyzed plan updated n rows of sends, looked
// each up by id, and read the statement's list of rows (u) once.
func requireLinearIn(t *testing.T, text string, n int) {
	t.Helper()
	require.Regexp(t, fmt.Sprintf(`Update on sends .*actual rows=%d `, n), text)
	for _, s := range scansOf(text, "u") {
		require.Equal(t, 1, s.loops, "the statement's rows read again for every row:\n%s", text)
	}
	requireSendsProbed(t, text)
}

// TestReleasePlanLinearInItsRows: SendReleaseMany (a shutdown's release, and the
// release of every row a pacing or warm-up hold kept back) on the plan cached on a
// settled table, as TestAckPlanLinearInItsRows for the acknowledgement: 500 rows
// released, the list of them read once, sends looked up by id.
func TestReleasePlanLinearInItsRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := settledPlans(t)
	c := sendingCampaign(t, s.e, s.next)
	for range 8 { // the plans again, on those statistics
		rows, err := s.e.claim(ctx, c, 1)
		require.NoError(t, err)
		n, err := s.e.release(ctx, []claimRef{{id: rows[0].ID, attempts: rows[0].Attempts}})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
	}
	rows, err := s.e.claim(ctx, c, 500)
	require.NoError(t, err)
	require.Len(t, rows, 500)
	refs := make([]claimRef, len(rows))
	for i, r := range rows {
		refs[i] = claimRef{id: r.ID, attempts: r.Attempts}
	}
	ids, attempts := idsAndAttempts(rows)
	text := cachedPlan(t, s.f, s.one, "SendReleaseMany", (*store.Queries).SendPlanLinear, fmt.Sprintf(
		`ARRAY[%s]::bigint[], ARRAY[%s]::int[], %s, NULL`, ids, attempts, sqlArray(slices.Repeat([]string{"-1"}, len(rows)))),
		"ANALYZE", "TIMING OFF")
	requireLinearIn(t, text, 500)
	n, err := s.e.release(ctx, refs) // the plan's run was rolled back
	require.NoError(t, err)
	require.EqualValues(t, 500, n)
	require.EqualValues(t, 6000, s.f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'queued'`, s.next))
}

// claimAndAck claims n rows of the sending campaign id on e and sends and
// acknowledges them (one acknowledgement).
func claimAndAck(t *testing.T, e *Executor, id int64, n int) {
	t.Helper()
	ctx := context.Background()
	c := sendingCampaign(t, e, id)
	rows, err := e.claim(ctx, c, n)
	require.NoError(t, err)
	require.Len(t, rows, n)
	ackAll(ctx, e, c, rows)
}

// ackAll sends claimed rows of c through e's provider and acknowledges them in one
// acknowledgement.
func ackAll(ctx context.Context, e *Executor, c *campaign, rows []store.SendClaimBatchRow) {
	results := make([]result, 0, len(rows))
	for _, r := range rows {
		results = append(results, e.send(ctx, job{campaign: c, row: r}))
	}
	e.flush(results)
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

	text := cachedPlan(t, f, one, "MessageClaimBatch", (*store.Queries).SendPlanLinear,
		fmt.Sprintf(`false, NULL, 'default', %d, NULL, 1, '1 minute', NULL, true`, c.ID))
	requireSendsProbed(t, text)
	require.Contains(t, text, "Index Scan using sends_claim_idx", "plan:\n%s", text)
	text = cachedPlan(t, f, one, "MessageStreamsDue", (*store.Queries).SendPlanIndexed, `NULL`)
	requireSendsProbed(t, text)
	require.Contains(t, text, "sends_claim_idx", "plan:\n%s", text)
}

// TestMaintenancePlansCachedWhileSmall audits the rest: every statement on sends
// the executor's maintenance runs (the rescue, the finish check, the sweeps, the
// queued gauge; retention deletes nothing here, so its statements are not among
// them) that PostgreSQL has put on a generic plan, cached while sends was small,
// must still read sends by id or in a partial index of unsettled rows once a large
// campaign is built: maintenance runs every few seconds on every executor.
func TestMaintenancePlansCachedWhileSmall(t *testing.T) {
	t.Parallel()
	f, one := planFixture(t)
	ctx := context.Background()
	acct := f.account("a")
	f.subscribers(acct, "first", 40, "confirmed")
	small := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	require.EqualValues(t, 40, f.start(small))
	cancelled := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	require.EqualValues(t, 40, f.start(cancelled))
	e := newExecutor(t, one, newFake(true), Config{})
	rows, err := e.claim(ctx, sendingCampaign(t, e, small), 2) // two rows in flight
	require.NoError(t, err)
	require.Len(t, rows, 2)
	// A cancel whose sweep is left to maintenance (the request was cut short).
	f.exec(`UPDATE campaigns SET status = 'cancelled', cancelled_at = now() WHERE id = $1`, cancelled)
	for range 8 {
		e.queuedAfter = time.Time{}
		require.NoError(t, e.maintainOnce(ctx))
	}
	require.Zero(t, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'queued'`, cancelled))
	f.subscribers(acct, "later", 30000, "confirmed")
	big := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	require.EqualValues(t, 30040, f.start(big))

	// Each statement's cached generic plan, whatever its parameters' values.
	cached, err := one.Query(ctx, `SELECT name, statement, cardinality(parameter_types) FROM pg_prepared_statements
		WHERE generic_plans > 0 AND statement ~ '\msends\M' ORDER BY statement`)
	require.NoError(t, err)
	type stmt struct {
		Name, SQL string
		Params    int
	}
	stmts, err := pgx.CollectRows(cached, pgx.RowToStructByPos[stmt])
	require.NoError(t, err)
	var checked []string
	for _, s := range stmts {
		query, _, _ := strings.Cut(strings.TrimPrefix(s.SQL, "-- name: "), " ")
		execute := "EXPLAIN EXECUTE " + pgx.Identifier{s.Name}.Sanitize()
		if s.Params > 0 {
			execute += "(" + strings.TrimSuffix(strings.Repeat("NULL, ", s.Params), ", ") + ")"
		}
		text := explain(t, one, nil, execute)
		t.Logf("%s plan:\n%s", query, text)
		requireSendsProbed(t, text)
		checked = append(checked, query)
	}
	for _, want := range []string{"SendRescueExpired", "CampaignListCancelledWithQueued", "SendCountQueued"} {
		require.Contains(t, checked, want, "not on a cached generic plan: the test checks nothing of it")
	}

	// And planned from statistics taken right after the build, which say nearly
	// every row is queued: a finish check, a gauge or a list of cancelled campaigns
	// that expects to meet a queued row at once scanned the table when none was
	// (`sendonce bench --grow`: 0.2-0.3 s each at 1,000,000 rows, the list every
	// maintenance tick).
	f.exec(`ANALYZE sends`)
	indexed := (*store.Queries).SendPlanIndexed
	text := cachedPlan(t, f, one, "CampaignFinish", indexed, fmt.Sprintf("NULL, %d", big))
	requireSendsProbed(t, text)
	require.Regexp(t, `Index Cond: \(campaign_id = `, text)
	for _, list := range []string{"CampaignListCancelledWithQueued", "CampaignListFailedWithQueued", "SendCountQueued"} {
		text = cachedPlan(t, f, one, list, indexed, "")
		requireSendsProbed(t, text)
	}
	require.Regexp(t, `Index Cond: \(campaign_id = c.id\)`, cachedPlan(t, f, one, "CampaignListCancelledWithQueued", indexed, ""))
	e.queuedAfter = time.Time{}
	require.NoError(t, e.maintainOnce(ctx)) // and the maintenance runs on them
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
func cachedPlan(t *testing.T, f fixture, one *pgxpool.Pool, name string, setting func(*store.Queries, context.Context) error, args string, options ...string) string {
	t.Helper()
	require.Zero(t, f.int64(`SELECT count(*) FROM pg_stat_user_tables WHERE relname = 'sends' AND (last_autoanalyze IS NOT NULL OR last_autovacuum IS NOT NULL)`),
		"sends was analyzed since the plan was made")
	ctx := context.Background()
	var stmt string // the one connection's prepared statement
	require.NoError(t, one.QueryRow(ctx, `SELECT name FROM pg_prepared_statements WHERE starts_with(statement, $1)`,
		"-- name: "+name+" ").Scan(&stmt))
	execute := "EXPLAIN EXECUTE " + pgx.Identifier{stmt}.Sanitize()
	if len(options) > 0 {
		execute = "EXPLAIN (" + strings.Join(options, ", ") + ") EXECUTE " + pgx.Identifier{stmt}.Sanitize()
	}
	if args != "" {
		execute += "(" + args + ")"
	}
	text := explain(t, one, func(tx pgx.Tx) error { return setting(store.New(tx), ctx) }, execute)
	t.Logf("%s plan:\n%s", name, text)
	return text
}

// requireSendsProbed fails unless every scan of sends in plan looks its rows up by
// their ids (an index condition on id), or reads a partial index of the rows not
// settled: a sequential scan, an index scan with no condition (the whole index) or
// by campaign (the whole campaign) reads rows in proportion to the table.
var byID = regexp.MustCompile(`^(Index|Recheck) Cond: \(+id = `)

func requireSendsProbed(t *testing.T, plan string) {
	t.Helper()
	require.NotContains(t, plan, "JIT:", "a plan the settings priced past jit_above_cost is compiled on every run")
	lines := strings.Split(plan, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "Scan") || !strings.Contains(l, " on sends ") {
			continue
		}
		require.NotContains(t, l, "Seq Scan", "plan:\n%s", plan)
		// sends_claim_idx and sends_lease_idx hold only the queued and the
		// in-flight rows: read whole, they do not grow with the settled ones.
		cond := strings.Contains(l, "using sends_claim_idx") || strings.Contains(l, "using sends_lease_idx")
		for _, d := range lines[i+1:] {
			d = strings.TrimSpace(d)
			if strings.HasPrefix(d, "->  Bitmap Index Scan on sends_claim_idx") || strings.HasPrefix(d, "->  Bitmap Index Scan on sends_lease_idx") {
				cond = true // a bitmap heap scan of the rows a partial index holds
			}
			if strings.HasPrefix(d, "->") || strings.HasPrefix(d, "CTE ") || strings.HasPrefix(d, "InitPlan") || strings.HasPrefix(d, "SubPlan") {
				break
			}
			if byID.MatchString(d) {
				cond = true
			}
		}
		require.True(t, cond, "sends read not by id: %s\nplan:\n%s", strings.TrimSpace(l), plan)
	}
}

// TestBuildAfterAnImport is the slow build `sendonce bench --grow` found: a list
// imported since list_members was last analyzed is, by its statistics, empty, and
// the audience query's membership EXISTS (inside an OR, so a SubPlan, not a join)
// was then planned as a hashed SubPlan that read the whole list for every window
// of buildWindow subscribers: 200 s to build 1,000,000 recipients instead of
// 13-17 s, until autovacuum analyzed list_members 30 s in. Import a list, send at
// once is the common path. The same holds for the suppressions, of every account.
// Each window must read no more of list_members and suppressions than its own
// subscribers, whatever the statistics say.
func TestBuildAfterAnImport(t *testing.T) {
	t.Parallel()
	var sql string
	var args []any
	cfg, err := pgxpool.ParseConfig(dbtest.URL(t))
	require.NoError(t, err)
	cfg.ConnConfig.Tracer = buildSQL{&sql, &args}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	f := fixture{t, pool}
	tf := testfactory.New(pool)
	acct, other := f.account("a"), f.account("b")
	before := f.list(acct, "before")
	f.subscribers(acct, "old", 100, "confirmed")
	f.members(acct, before, "old")
	tf.Suppressions(t, acct, "old", 10, "unsubscribe")
	for _, table := range []string{"list_members", "suppressions"} {
		f.exec(`ALTER TABLE ` + table + ` SET (autovacuum_enabled = false)`)
		f.exec(`ANALYZE ` + table)
	}
	// Since the statistics: a list of 20,000 imported, and another tenant's
	// 20,000 suppressions.
	f.subscribers(acct, "new", 20000, "confirmed")
	imported := f.list(acct, "imported")
	f.members(acct, imported, "new")
	tf.Suppressions(t, other, "gone", 20000, "unsubscribe")

	c := f.campaign(acct, []int64{imported}, "skip", time.Now().Add(-time.Minute))
	require.EqualValues(t, 20000, f.start(c))
	require.NotEmpty(t, sql, "the build ran no audience query")
	text := explain(t, pool, nil, "EXPLAIN (ANALYZE, TIMING OFF) "+sql, args...)
	t.Logf("first window's plan:\n%s", text)
	for _, table := range []string{"list_members", "suppressions"} {
		scans := scansOf(text, table)
		require.Len(t, scans, 1, "one scan of %s:\n%s", table, text)
		require.LessOrEqual(t, scans[0].rows*scans[0].loops, buildWindow, "a window read all that of %s:\n%s", table, text)
	}
}

// TestMessageClaimJudgesOncePerRow: a message stream's claim looks each picked
// row's address up in suppressions once. As an EXISTS in judged (which is not
// materialized, so as not to copy the bodies) it ran again for every CASE of the
// UPDATE that reads the verdict: eight probes per message.
func TestMessageClaimJudgesOncePerRow(t *testing.T) {
	t.Parallel()
	f, one := planFixture(t)
	ctx := context.Background()
	acct := f.account("a")
	e := newExecutor(t, one, newFake(true), Config{})
	for i := range 21 {
		f.message(acct, nil, fmt.Sprintf("m%d", i), fmt.Sprintf("r%d@example.com", i))
	}
	testfactory.New(f.pool).Suppression(t, acct, "r1@example.com", "hard_bounce", "test")
	c := streamOf(t, e, &dealer{byID: map[int64]*campaign{}}, acct)
	rows, err := e.claimMessages(ctx, c, e.routeOf(c), 1) // prepares the statement on one's connection
	require.NoError(t, err)
	require.Len(t, rows, 1)

	var stmt string
	require.NoError(t, one.QueryRow(ctx, `SELECT name FROM pg_prepared_statements WHERE starts_with(statement, '-- name: MessageClaimBatch ')`).Scan(&stmt))
	text := explain(t, one, func(tx pgx.Tx) error { return store.New(tx).SendPlanLinear(ctx) },
		fmt.Sprintf(`EXPLAIN (ANALYZE, TIMING OFF) EXECUTE %s(false, NULL, 'default', %d, NULL, 20, '1 minute', NULL, true)`,
			pgx.Identifier{stmt}.Sanitize(), c.ID))
	t.Logf("plan:\n%s", text)
	require.Regexp(t, `Update on sends .*actual rows=20 `, text)
	probes := 0
	for _, s := range scansOf(text, "suppressions") {
		probes += s.loops
	}
	require.Equal(t, 20, probes, "suppressions looked up per claimed row:\n%s", text)
	for _, s := range scansOf(text, "picked") {
		require.Equal(t, 1, s.loops, "the picked rows read again for every claimed row:\n%s", text)
	}
	requireSendsProbed(t, text)
}

// scan is one scan node of an EXPLAIN ANALYZE: the rows it returned per loop, and
// how many times it ran.
type scan struct{ rows, loops int }

// scansOf lists the scans of table in plan, an EXPLAIN (ANALYZE, TIMING OFF).
func scansOf(plan, table string) []scan {
	var scans []scan
	node := regexp.MustCompile(` on ` + table + ` .*actual rows=(\d+) loops=(\d+)`)
	for _, m := range node.FindAllStringSubmatch(plan, -1) {
		rows, _ := strconv.Atoi(m[1])
		loops, _ := strconv.Atoi(m[2])
		scans = append(scans, scan{rows, loops})
	}
	return scans
}
