package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// fakeProvider stands in for the outside world: it records every call per job id
// and answers with fail (nil: accept).
type fakeProvider struct {
	idempotent bool
	// allowRepeats: the test accepts a second copy (ambiguous_policy retry on a
	// provider that cannot deduplicate), so the invariant skips at-most-once.
	allowRepeats bool
	fail         func(m provider.Message, call int) error
	block        chan struct{} // when set, Send waits for it (or ctx)
	mu           sync.Mutex
	calls        map[string]int // every call
	accepted     map[string]int // calls answered without error
	order        []provider.Message
	inFlight     int
}

func newFake(idempotent bool) *fakeProvider {
	return &fakeProvider{idempotent: idempotent, calls: map[string]int{}, accepted: map[string]int{}}
}

func (f *fakeProvider) Idempotent() bool { return f.idempotent }

func (f *fakeProvider) Send(ctx context.Context, m provider.Message) (string, error) {
	f.mu.Lock()
	f.calls[m.JobID]++
	call := f.calls[m.JobID]
	f.inFlight++
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if f.fail != nil {
		if err := f.fail(m, call); err != nil {
			return "", err
		}
	}
	f.mu.Lock()
	f.accepted[m.JobID]++
	f.order = append(f.order, m.Clone()) // m borrows the worker's buffer until Send returns
	f.mu.Unlock()
	return "pid-" + m.JobID, nil
}

func (f *fakeProvider) snapshot() (calls, accepted map[string]int, order []provider.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls, accepted = map[string]int{}, map[string]int{}
	for k, v := range f.calls {
		calls[k] = v
	}
	for k, v := range f.accepted {
		accepted[k] = v
	}
	return calls, accepted, append([]provider.Message(nil), f.order...)
}

// delivered is what reached recipients: an idempotent provider drops a replay of
// a job id it accepted before; any other delivers every accepted call.
func (f *fakeProvider) delivered() map[string]int {
	_, accepted, _ := f.snapshot()
	if f.idempotent {
		for k := range accepted {
			accepted[k] = 1
		}
	}
	return accepted
}

func temporary(msg string) error {
	return &provider.Error{Class: provider.Temporary, Code: 451, Err: errors.New(msg)}
}

// fixture inserts tenants, subscribers and campaigns with plain SQL.
type fixture struct {
	t    *testing.T
	pool *pgxpool.Pool
}

func (f fixture) exec(sql string, args ...any) {
	f.t.Helper()
	_, err := f.pool.Exec(context.Background(), sql, args...)
	require.NoError(f.t, err)
}

func (f fixture) int64(sql string, args ...any) int64 {
	f.t.Helper()
	var n int64
	require.NoError(f.t, f.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func (f fixture) account(name string) int64 {
	return testfactory.New(f.pool).Account(f.t, name).ID
}

// subscribers adds n subscribers prefix<i>@example.com with status and returns the first id.
func (f fixture) subscribers(acct int64, prefix string, n int, status string) int64 {
	return testfactory.New(f.pool).BulkSubscribers(f.t, acct, testfactory.Bulk{Prefix: prefix, N: n, Name: "Sub ",
		NumberName: true, Statuses: []string{status}, NumberKey: "n"})
}

func (f fixture) list(acct int64, name string) int64 {
	return testfactory.New(f.pool).List(f.t, acct, name)
}

// members puts every subscriber of acct whose email starts with prefix into list.
func (f fixture) members(acct, list int64, prefix string) {
	testfactory.New(f.pool).MembersByPrefix(f.t, acct, list, prefix)
}

// campaign inserts an approved campaign due at scheduled.
func (f fixture) campaign(acct int64, lists []int64, policy string, scheduled time.Time) int64 {
	return testfactory.New(f.pool).Campaign(f.t, acct, testfactory.Campaign{Subject: "Hello {{.Name}}",
		FromEmail: "news@example.com", HTML: `<p>Hi {{.Name}} {{.Attributes.n}}</p>
		<a href="{{.UnsubscribeURL}}">unsubscribe</a>`, Text: "Hi {{.Name}}", ListIDs: lists, Status: "approved",
		Policy: policy, ScheduledFor: &scheduled, ApprovedAt: &scheduled})
}

// start builds and starts an approved, due campaign the way the scheduler does, and
// returns how many sends the build queued.
func (f fixture) start(campaign int64) int64 {
	f.t.Helper()
	b, started, err := StartCampaign(context.Background(), f.pool, campaign, nil)
	require.NoError(f.t, err)
	require.True(f.t, started, "campaign %d did not start", campaign)
	return b.Rows
}

func (f fixture) status(campaign int64) string {
	f.t.Helper()
	var s string
	require.NoError(f.t, f.pool.QueryRow(context.Background(), `SELECT status FROM campaigns WHERE id = $1`, campaign).Scan(&s))
	return s
}

// counts returns the send rows of a campaign by status (non-zero statuses only),
// through the same query the stats API uses.
func (f fixture) counts(campaign int64) map[string]int {
	f.t.Helper()
	ctx := context.Background()
	var account int64
	require.NoError(f.t, f.pool.QueryRow(ctx, `SELECT account_id FROM campaigns WHERE id = $1`, campaign).Scan(&account))
	c, err := store.New(f.pool).CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: account, CampaignID: campaign})
	require.NoError(f.t, err)
	m := map[string]int{}
	for status, n := range map[string]int64{"queued": c.Queued, "sending": c.Sending, "sent": c.Sent,
		"failed": c.Failed, "suppressed": c.Suppressed, "cancelled": c.Cancelled, "unknown": c.Unknown} {
		if n > 0 {
			m[status] = int(n)
		}
	}
	return m
}

// heldClock is an injectable date that tests move by hand.
type heldClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *heldClock { return &heldClock{t: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)} }

func (c *heldClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *heldClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// newExecutor builds an executor whose test ends with the shared delivery
// invariant check; registered here, the check runs after runUntil's Stop (cleanups
// run last-in first-out) and before the database is dropped.
func newExecutor(t *testing.T, pool *pgxpool.Pool, p Provider, cfg Config) *Executor {
	t.Helper()
	e, err := New(pool, p, cfg, nil, nil)
	require.NoError(t, err)
	e.signals.finished.Init() // a campaign at a time: waitSent reads them
	e.signals.started.Init()  // waitStarted reads them
	t.Cleanup(func() {
		o := invariant.Options{KeptCounters: true}
		if f, ok := p.(*fakeProvider); ok {
			o.Delivered, o.AllowRepeats = f.delivered(), f.allowRepeats
		}
		invariant.Require(t, pool, o)
	})
	return e
}

// waitSent waits for e to mark campaign c sent (its finished signal: no poll of
// the database, no sleep), then checks the campaign reads so.
func waitSent(t *testing.T, f fixture, e *Executor, c int64) {
	t.Helper()
	e.signals.finished.WaitFor(t, func(id int64) bool { return id == c })
	require.Equal(t, "sent", f.status(c))
}

// waitStarted waits for e to start campaign c (its started signal: the build
// committed), then checks the campaign reads sending.
func waitStarted(t *testing.T, f fixture, e *Executor, c int64) {
	t.Helper()
	e.signals.started.WaitFor(t, func(id int64) bool { return id == c })
	require.Equal(t, "sending", f.status(c))
}

// waitNothingDue waits until e has claimed campaign c on the date at (or later),
// found no row due, and holds none unacknowledged: the dispatcher looked after
// the date moved, where a sleep could only hope it had. e.signals.claimed must be
// initialised before e starts.
func waitNothingDue(t *testing.T, e *Executor, c int64, at time.Time) {
	t.Helper()
	e.signals.claimed.WaitFor(t, func(s claimSignal) bool {
		return s.campaign == c && s.rows == 0 && s.at != nil && !s.at.Before(at) && e.unacked.Load() == 0
	})
}

// shareFinished has es report the campaigns they finish on the first one's
// signal, for waitSent on a campaign any of them may finish. Before they start.
func shareFinished(es ...*Executor) {
	for _, e := range es[1:] {
		e.signals.finished = es[0].signals.finished
	}
}

// runUntil starts e and stops it (gracefully) when the test ends.
func runUntil(t *testing.T, e *Executor) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	_ = e.Start(ctx) // the executor's Start never fails
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		require.NoError(t, e.Stop(sctx))
	})
}

func jobID(c, s int64) string { return fmt.Sprintf("campaign:%d:%d", c, s) }

func openPoolB(b *testing.B, url string, conns int32) *pgxpool.Pool {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := postgres.Open(ctx, url, conns)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return pool
}

// backdateOK moves the start of e's run of good heartbeats d earlier: as if e had
// beaten all along.
func backdateOK(e *Executor, d time.Duration) {
	id, beatAt, okSince := e.live.State()
	e.live.Assume(id, beatAt, okSince.Add(-d))
}

// explain is the plan of sql (EXPLAIN sql, or a whole EXPLAIN EXECUTE when sql
// starts with EXPLAIN) in a transaction on pool that before prepares (a setting, a
// look-up; nil: none) and that is then rolled back: EXPLAIN of an UPDATE plans
// only, but nothing is left behind either way.
func explain(t *testing.T, pool *pgxpool.Pool, before func(pgx.Tx) error, sql string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	if !strings.HasPrefix(sql, "EXPLAIN") {
		sql = "EXPLAIN " + sql
	}
	var plan []string
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if before != nil {
			if err := before(tx); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		return errRollback
	})
	require.ErrorIs(t, err, errRollback)
	return strings.Join(plan, "\n")
}

var errRollback = errors.New("rollback: leave nothing behind")
