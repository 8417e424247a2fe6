package liveness

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/clock"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
)

// heldClock is an injected date; the statements use it too.
type heldClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *heldClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *heldClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }
func newReg(pool *pgxpool.Pool, c *heldClock) *Registration {
	return New(store.New(pool), Options{Heartbeat: 2 * time.Second, Clock: clock.New(c.Now, 0)})
}

func heartbeatAt(t *testing.T, pool *pgxpool.Pool, id int64) (time.Time, bool) {
	t.Helper()
	var at time.Time
	err := pool.QueryRow(context.Background(), `SELECT heartbeat_at FROM executors WHERE id = $1`, id).Scan(&at)
	if err != nil {
		return time.Time{}, false
	}
	return at, true
}

// TestJudgesOnlyAfterADeadIntervalOfGoodBeats: a registration judges others only
// after three heartbeat intervals of its own good beats; a failed beat starts the
// run again; a heartbeat written after a failure wakes the loops backing off.
func TestJudgesOnlyAfterADeadIntervalOfGoodBeats(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	c := &heldClock{now: time.Now()}
	r := newReg(pool, c)
	ctx := context.Background()
	require.Zero(t, r.ID())
	require.Nil(t, r.Self())
	require.False(t, r.MayJudge(), "unregistered")

	require.True(t, r.Beat(ctx), "the first beat registers")
	id := r.ID()
	require.NotZero(t, id)
	at, ok := heartbeatAt(t, pool, id)
	require.True(t, ok)
	require.WithinDuration(t, c.Now(), at, time.Millisecond, "the row is dated by the injected clock")
	require.False(t, r.MayJudge())
	for range 3 {
		c.Add(2 * time.Second)
		require.False(t, r.Beat(ctx))
	}
	require.True(t, r.MayJudge(), "a dead interval of good beats")

	// A failed beat (the database unreachable) ends the run.
	back := r.Back()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	r.Beat(cancelled)
	require.False(t, r.MayJudge())
	select {
	case <-back:
		t.Fatal("a failure woke the waiters")
	default:
	}
	c.Add(2 * time.Second)
	r.Beat(ctx)
	<-back // closed: the database is back
	require.False(t, r.MayJudge(), "a new run starts with the recovery")
	c.Add(6 * time.Second)
	r.Beat(ctx)
	require.True(t, r.MayJudge())
	require.Equal(t, id, r.ID(), "the same registration throughout")
}

// TestDeclaredDeadRegistersAgain: a registration whose row another process deleted
// as dead registers again under a new id, keeps every id it had (the rows stamped
// with them are its own), and no longer holds the claims of the old one.
func TestDeclaredDeadRegistersAgain(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	c := &heldClock{now: time.Now()}
	r, judge := newReg(pool, c), newReg(pool, c)
	ctx := context.Background()
	r.Beat(ctx)
	judge.Beat(ctx)
	old := r.ID()
	require.True(t, r.Holds(old))
	require.True(t, r.Holds(0), "claims without a registration answer to their lease")

	c.Add(7 * time.Second) // r is silent three heartbeats and more; judge beats
	judge.Beat(ctx)
	require.False(t, r.Holds(old), "two intervals without a beat: a rescuer may have taken the row")
	n, err := store.New(pool).ExecutorDeleteDead(ctx, store.ExecutorDeleteDeadParams{Now: judge.SQLNow(),
		DeadAfter: pgInterval(judge.DeadAfter())})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)

	require.True(t, r.Beat(ctx), "declared dead: registers again")
	require.NotEqual(t, old, r.ID())
	require.Equal(t, []int64{old, r.ID()}, r.IDs())
	require.False(t, r.Holds(old), "the old registration's claims are not its own any more")
	require.True(t, r.Holds(r.ID()))
}

// TestBeatIfDue writes at most one heartbeat a Heartbeat, and registers at once.
func TestBeatIfDue(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	c := &heldClock{now: time.Now()}
	r := newReg(pool, c)
	ctx := context.Background()
	require.True(t, r.BeatIfDue(ctx))
	first, _ := heartbeatAt(t, pool, r.ID())
	c.Add(time.Second)
	r.BeatIfDue(ctx)
	at, _ := heartbeatAt(t, pool, r.ID())
	require.Equal(t, first, at, "not due yet")
	c.Add(time.Second)
	r.BeatIfDue(ctx)
	at, _ = heartbeatAt(t, pool, r.ID())
	require.True(t, at.After(first))
}

// TestDeregisterDeletesTheRow: a graceful stop deletes the row; a later one is a no-op.
func TestDeregisterDeletesTheRow(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	r := New(store.New(pool), Options{Heartbeat: time.Second})
	ctx := context.Background()
	r.Beat(ctx)
	id := r.ID()
	_, ok := heartbeatAt(t, pool, id)
	require.True(t, ok)
	require.NoError(t, r.Deregister(ctx))
	_, ok = heartbeatAt(t, pool, id)
	require.False(t, ok)
	require.Zero(t, r.ID())
	require.NoError(t, r.Deregister(ctx))
}

// TestLostClaims: only a claim that may have committed is pending, from the
// earliest such claim; the lease bound is the failed claim's lease less the skew.
func TestLostClaims(t *testing.T) {
	t.Parallel()
	var l LostClaims
	t0 := time.Now()
	require.Error(t, l.Failed(&pgconn.PgError{Severity: "ERROR", Code: pgerrcode.SerializationFailure}, t0))
	require.False(t, l.Pending(), "the server refused it: rolled back")
	require.NoError(t, l.Failed(nil, t0))
	require.False(t, l.Pending())
	_ = l.Failed(io.ErrUnexpectedEOF, t0.Add(time.Second))
	_ = l.Failed(io.ErrUnexpectedEOF, t0)
	_ = l.Failed(io.ErrUnexpectedEOF, t0.Add(2*time.Second))
	require.True(t, l.Pending())
	require.Equal(t, time.Minute-LostClaimSkew-5*time.Second, l.LeaseFromIn(time.Minute, t0.Add(5*time.Second)), "from the earliest lost claim, as an age")
	l.Released()
	require.False(t, l.Pending())

	require.True(t, OutcomeUnknown(context.DeadlineExceeded))
	require.True(t, OutcomeUnknown(&pgconn.PgError{Severity: "FATAL", Code: "57P01"}))
	require.False(t, OutcomeUnknown(errors.Join(errors.New("claim"), &pgconn.PgError{Severity: "ERROR"})))
}

func pgInterval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}
