package executor

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/liveness"
	"github.com/sendonce/sendonce/internal/provider"
)

// TestLostClaimAnswerReleasedWhileExecutorLives reproduces a failover's claim
// that committed while its answer was lost: a connection that lets the claim
// statement through, lets PostgreSQL commit it (the answer up to ReadyForQuery is
// read), and then dies before pgx sees a byte of it. The rows are 'sending' and
// stamped with an executor that keeps beating, so neither the liveness rescue nor
// (with a one-hour lease) the lease frees them. Before the executor released the
// rows of claims whose answer was lost, the campaign stayed 'sending' with the
// cut claim's rows until the lease ran out. Now they are sent, once each, with
// their lost attempt uncharged and not in doubt; a second executor sending the
// same campaign meanwhile keeps its rows (SKIP LOCKED, and the release touches only
// rows stamped with the first executor's ids). The provider cannot deduplicate and
// the campaign's policy is skip, so a rescue would have shown as unknown rows and
// a second send as a repeat.
func TestLostClaimAnswerReleasedWhileExecutorLives(t *testing.T) {
	t.Parallel()
	lostClaimReleased(t, 0)
}

// TestLostClaimReleasedOnASkewedHost: the same on hosts whose clocks are 30 s
// behind and ahead of PostgreSQL's. The rows to hand back are told by their
// lease_until, which the database stamped: a bound on it dated on the host's clock
// missed them all when that clock ran ahead (they waited for their hour's lease),
// and reached back to rows claimed long before the lost claim when it ran behind.
func TestLostClaimReleasedOnASkewedHost(t *testing.T) {
	t.Parallel()
	for _, skew := range skews {
		t.Run(skew.String(), func(t *testing.T) {
			t.Parallel()
			lostClaimReleased(t, skew)
		})
	}
}

func lostClaimReleased(t *testing.T, skew time.Duration) {
	const n = 300
	url := dbtest.URL(t)
	admin := openPool(t, url, 2)
	f := fixture{t, admin}
	acct := f.account("a")
	f.subscribers(acct, "r", n, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Second))

	p := newFake(false)
	p.fail = func(provider.Message, int) error { time.Sleep(time.Millisecond); return nil }
	cut := &claimCutter{left: 1}
	cfg := Config{Tick: 100 * time.Millisecond, Workers: 4, BatchSize: 10, Lease: time.Hour,
		Maintenance: 100 * time.Millisecond, Poll: 20 * time.Millisecond}
	skewed := cfg
	skewed.ClockSkew = skew
	cutting := newExecutor(t, cuttingPool(t, url, cut), p, skewed)
	other := newExecutor(t, openPool(t, url, 4), p, cfg)
	shareFinished(cutting, other)
	runUntil(t, cutting)
	runUntil(t, other)

	waitSent(t, f, cutting, c) // the cut claim's rows waited for their lease
	require.Equal(t, 1, cut.cuts(), "one claim's answer was lost")
	require.Positive(t, cut.rowsLost(), "the lost answer carried claimed rows")
	require.Equal(t, map[string]int{"sent": n}, f.counts(c))
	_, accepted, _ := p.snapshot()
	require.Len(t, accepted, n)
	for job, k := range accepted {
		require.Equal(t, 1, k, "%s sent once", job)
	}
	// The lost claim's attempt is given back, and nothing was sent in doubt.
	require.Zero(t, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND (attempts <> 1 OR in_doubt)`, c))
}

// TestClaimOutcomeUnknown: only a statement that never left (safe to retry) or
// that the server refused with an ERROR (its transaction rolled back) surely did
// not commit.
func TestClaimOutcomeUnknown(t *testing.T) {
	t.Parallel()
	require.True(t, liveness.OutcomeUnknown(io.ErrUnexpectedEOF))
	require.True(t, liveness.OutcomeUnknown(context.DeadlineExceeded))
	require.True(t, liveness.OutcomeUnknown(&pgconn.PgError{Severity: "FATAL", Code: "57P01"}))
	require.False(t, liveness.OutcomeUnknown(&pgconn.PgError{Severity: "ERROR", Code: "25006"}))
	require.False(t, liveness.OutcomeUnknown(errors.Join(errors.New("claim"), &pgconn.PgError{Severity: "ERROR"})))
	// A later step of the claim's pipelined batch answered "safe to retry" (pgx's
	// "conn closed" once the connection died under the claim): the batch had gone,
	// so the claim may have committed.
	require.False(t, liveness.OutcomeUnknown(retryable{}))
	require.True(t, liveness.OutcomeUnknown(sentBatchError(retryable{})))
	require.False(t, liveness.OutcomeUnknown(sentBatchError(&pgconn.PgError{Severity: "ERROR", Code: "25006"})))
}

// retryable is an error pgx would call safe to retry.
type retryable struct{}

func (retryable) Error() string     { return "conn closed" }
func (retryable) SafeToRetry() bool { return true }

// claimCutter cuts the connection of the next claim statements (left of them)
// that claim rows, once PostgreSQL has committed them.
type claimCutter struct {
	mu   sync.Mutex
	left int
	done int
	rows int
}

func (c *claimCutter) take() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left == 0 {
		return false
	}
	c.left--
	return true
}

// cut records one swallowed answer; an answer without rows does not count and the
// next claim is cut instead.
func (c *claimCutter) cut(rows int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rows == 0 {
		c.left++
		return
	}
	c.done++
	c.rows += rows
}

func (c *claimCutter) cuts() int     { c.mu.Lock(); defer c.mu.Unlock(); return c.done }
func (c *claimCutter) rowsLost() int { c.mu.Lock(); defer c.mu.Unlock(); return c.rows }

// cuttingPool is a pool whose connections cut claims as c says. It sends every
// statement's text (exec mode), so a claim is recognised by its sqlc name.
func cuttingPool(t *testing.T, url string, c *claimCutter) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.MaxConns = 4
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutConn{Conn: conn, cutter: c}, nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// cutConn passes bytes through until a claim statement is written on it while
// its cutter has cuts left. It then reads PostgreSQL's whole answer, up to
// ReadyForQuery (the implicit transaction has committed), and closes the
// connection without handing pgx a byte of it.
type cutConn struct {
	net.Conn
	cutter  *claimCutter
	cutting bool
	closed  bool
}

var claimStatement = []byte("-- name: SendClaimBatch ")

func (c *cutConn) Write(b []byte) (int, error) {
	if !c.cutting && bytes.Contains(b, claimStatement) && c.cutter.take() {
		c.cutting = true
	}
	return c.Conn.Write(b)
}

func (c *cutConn) Read(b []byte) (int, error) {
	if !c.cutting {
		return c.Conn.Read(b)
	}
	if c.closed {
		return 0, io.ErrUnexpectedEOF
	}
	c.closed = true
	var answer []byte
	chunk := make([]byte, 8192)
	for {
		rows, ready := scanAnswer(answer)
		if ready {
			c.cutter.cut(rows)
			break
		}
		k, err := c.Conn.Read(chunk)
		answer = append(answer, chunk[:k]...)
		if err != nil {
			c.cutter.cut(0) // the connection died on its own: not the cut we want
			break
		}
	}
	_ = c.Conn.Close()
	return 0, io.ErrUnexpectedEOF
}

// scanAnswer counts the DataRow messages of a backend answer and reports whether
// it is complete (ReadyForQuery seen).
func scanAnswer(b []byte) (rows int, ready bool) {
	for len(b) >= 5 {
		l := int(binary.BigEndian.Uint32(b[1:5]))
		if len(b) < 1+l {
			return rows, false
		}
		switch b[0] {
		case 'D':
			rows++
		case 'Z':
			return rows, true
		}
		b = b[1+l:]
	}
	return rows, false
}

// TestBackoffEndsWhenHeartbeatRecovers: the claim loop and the acknowledgements
// back off through a database outage (up to 10 s and 5 s). A failover's new
// primary used to wait for the next step of those backoffs (the failover harness
// resumed sending up to 10 s after Patroni's promotion); now the first heartbeat
// written after a failure ends every backoff at once.
func TestBackoffEndsWhenHeartbeatRecovers(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, dbtest.New(t), newFake(true), Config{})
	ctx := context.Background()
	// The loop takes the channel before its attempt (which failed: no heartbeat
	// yet), so whenever the waiter starts, the recovery below wakes it.
	back := e.live.Back()
	done := make(chan bool, 1)
	go func() { done <- e.sleepUnlessBack(ctx, back, time.Hour) }()
	e.beat(ctx) // registers: the first heartbeat after none (or after failures)
	select {
	case alive := <-done:
		require.True(t, alive)
	case <-time.After(time.Minute):
		t.Fatal("the backoff still waits an hour after the database came back")
	}
	// A heartbeat in a run of good ones wakes nobody.
	back = e.live.Back()
	go func() { done <- e.sleepUnlessBack(ctx, back, 50*time.Millisecond) }()
	e.beat(ctx)
	require.True(t, <-done)
	select {
	case <-back:
		t.Fatal("a heartbeat in a good run closed the waiters' channel")
	default: // still open: only the waiter's timer ended its wait
	}
}

// TestLostClaimReleaseLeavesEarlierClaims: only rows whose lease began with the
// failed claim are released. A row of this executor claimed earlier and still
// 'sending' is what an asynchronous failover leaves when it undoes the
// acknowledgement of a row that was sent: released as never sent, it would go out
// again over SMTP with nothing reporting it; left alone, the lease rescue settles
// it as possibly delivered. On the injected clock.
func TestLostClaimReleaseLeavesEarlierClaims(t *testing.T) {
	t.Parallel()
	f, clk, a, b, c := twoExecutors(t, 6, "skip", newFake(false))
	ctx := context.Background()
	acked, err := a.claim(ctx, c, 2) // sent, its acknowledgement undone by the failover
	require.NoError(t, err)
	require.Len(t, acked, 2)
	clk.Add(10 * time.Second)
	a.beat(ctx)
	b.beat(ctx)
	failedAt := clk.Now()
	lost, err := a.claim(ctx, c, 3) // committed, its answer lost
	require.NoError(t, err)
	require.Len(t, lost, 3)
	require.Error(t, a.claimFailed(io.ErrUnexpectedEOF, failedAt))

	_, hold, err := a.settleLostClaims(ctx, &dealer{})
	require.NoError(t, err)
	require.False(t, hold)
	for _, r := range lost {
		s := readSend(t, f.pool, r.ID)
		require.Equal(t, "queued", s.Status, "the lost claim's rows are back")
	}
	require.Zero(t, f.int64(`SELECT count(*) FROM sends WHERE id = ANY($1) AND (attempts <> 0 OR in_doubt)`,
		[]int64{lost[0].ID, lost[1].ID, lost[2].ID}), "uncharged, not in doubt")
	for _, r := range acked {
		require.Equal(t, "sending", readSend(t, f.pool, r.ID).Status, "an earlier claim's rows stay for the lease")
	}
	clk.Add(2 * time.Minute) // their lease: possibly delivered, so unknown (SMTP, skip)
	b.beat(ctx)
	n, err := b.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, map[string]int{"queued": 4, "unknown": 2}, f.counts(c.ID))
}
