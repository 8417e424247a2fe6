package sequence_test

import (
	"context"
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// clock is a time the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type env struct {
	t     *testing.T
	pool  *pgxpool.Pool
	clock *clock
	svc   *sequence.Service
	adv   *sequence.Advancer
	ctx   context.Context
}

func setup(t *testing.T) *env {
	t.Parallel()
	pool := dbtest.New(t)
	c := &clock{t: time.Date(2030, 1, 7, 8, 0, 0, 0, time.UTC)} // a Monday
	svc := sequence.NewService(pool)
	svc.Now = c.Now
	return &env{t: t, pool: pool, clock: c, svc: svc, adv: &sequence.Advancer{Pool: pool, Now: c.Now, Batch: 7},
		ctx: context.Background()}
}

func (e *env) int64(sql string, args ...any) int64 {
	e.t.Helper()
	var n int64
	require.NoError(e.t, e.pool.QueryRow(e.ctx, sql, args...).Scan(&n))
	return n
}

func (e *env) str(sql string, args ...any) string {
	e.t.Helper()
	var v string
	require.NoError(e.t, e.pool.QueryRow(e.ctx, sql, args...).Scan(&v))
	return v
}

func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	_, err := e.pool.Exec(e.ctx, sql, args...)
	require.NoError(e.t, err)
}

func (e *env) account(name string) int64 {
	return testfactory.New(e.pool).Account(e.t, name).ID
}

func (e *env) template(acct int64) int64 {
	return testfactory.New(e.pool).Template(e.t, acct, testfactory.Template{Name: "t" + rand.Text(),
		Subject: "Hi {{.Name}}", HTML: "<p>Hi</p>"})
}

func (e *env) list(acct int64) int64 {
	return testfactory.New(e.pool).List(e.t, acct, "l"+rand.Text())
}

// subscriber adds a confirmed subscriber; list (when not 0) gets it as a
// subscribed member joined at the clock's now.
func (e *env) subscriber(acct int64, email string, list int64) int64 {
	id := testfactory.New(e.pool).Subscriber(e.t, acct, testfactory.Subscriber{Email: email, Status: "confirmed"})
	if list != 0 {
		now := e.clock.Now()
		testfactory.New(e.pool).Memberships(e.t, acct, list, testfactory.Membership{SubscriberID: id, StatusAt: &now})
	}
	return id
}

// tick runs the advancer as the executor does.
func (e *env) tick() int {
	e.t.Helper()
	n, err := e.adv.Tick(e.ctx)
	require.NoError(e.t, err)
	return n
}

// sends is every send row of sequence seq: job id → status.
func (e *env) sends(seq int64) map[string]string {
	e.t.Helper()
	rows, err := e.pool.Query(e.ctx, `SELECT s.job_id, s.status FROM sends s JOIN sequence_steps st ON st.campaign_id = s.campaign_id
		WHERE st.sequence_id = $1`, seq)
	require.NoError(e.t, err)
	out := map[string]string{}
	for rows.Next() {
		var j, s string
		require.NoError(e.t, rows.Scan(&j, &s))
		out[j] = s
	}
	require.NoError(e.t, rows.Err())
	return out
}

func (e *env) enrollment(seq, sub int64) (state string, step int, reason *string) {
	e.t.Helper()
	require.NoError(e.t, e.pool.QueryRow(e.ctx, `SELECT state, step, exit_reason FROM sequence_enrollments WHERE sequence_id = $1 AND subscriber_id = $2`,
		seq, sub).Scan(&state, &step, &reason))
	return
}

func ptr[T any](v T) *T { return &v }

// welcome is a three-step series: send, wait, send.
func welcome(tpl int64, trig sequence.Trigger, wait string) sequence.Definition {
	return sequence.Definition{Name: "welcome", Trigger: trig, Steps: []sequence.Step{
		{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "hello@example.com"},
		{Type: sequence.StepWait, Duration: wait},
		{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "hello@example.com"},
	}}
}
