package executor

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/sendonce/sendonce/internal/store"
)

// liveness is this process's registration in the executors table (DESIGN.md §4,
// "Liveness, not only leases"). The heartbeat loop keeps it fresh; claims are
// stamped with its id; workers consult it before every send.
type liveness struct {
	mu sync.Mutex
	id int64 // 0 until registered
	// ids is every id this process has registered under (a new one each time it
	// was declared dead): rows stamped with any of them are its own (lostclaim.go).
	ids []int64
	// beatAt is when the last heartbeat was written (executor clock, read after the
	// statement returned, so the row's heartbeat_at is no later than this).
	beatAt time.Time
	// okSince starts the current run of heartbeats written without a failure: only
	// after a whole dead interval of them may this process judge others dead.
	okSince time.Time
	// back is closed (and replaced) when a heartbeat is written after a failure:
	// the database is reachable again (a failover's new primary, a restart).
	back chan struct{}
}

// backSignal returns the channel the next recovery closes.
func (l *liveness) backSignal() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.back == nil {
		l.back = make(chan struct{})
	}
	return l.back
}

// recovered records a heartbeat written at now and, when it ends a run of
// failures, wakes every loop backing off through the outage. Called with mu held.
func (l *liveness) recovered(now time.Time) {
	if !l.okSince.IsZero() {
		return
	}
	l.okSince = now
	if l.back != nil {
		close(l.back)
		l.back = nil
	}
}

// sleepUnlessBack waits d, or less when the heartbeat finds the database
// reachable again, so the loops that back off through an outage (claims,
// acknowledgements; backoffs up to 10 s) resume within a heartbeat of a
// failover's promotion instead of a backoff later. It reports whether ctx is
// still alive.
func (e *Executor) sleepUnlessBack(ctx context.Context, d time.Duration) bool {
	back := e.live.backSignal()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-back:
		return ctx.Err() == nil
	case <-t.C:
		return true
	}
}

func (l *liveness) get() (id int64, beatAt, okSince time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.id, l.beatAt, l.okSince
}

// deadAfter is how long an executor's heartbeat may be silent before its rows are
// rescued: three heartbeat intervals, so one slow or lost beat is not a death.
func (e *Executor) deadAfter() time.Duration { return 3 * e.cfg.Heartbeat }

// heartbeat registers this process, refreshes its heartbeat every Heartbeat, and
// after each beat rescues the rows of executors that stopped beating. It ends with
// claiming; Stop deregisters once everything in flight is settled.
func (e *Executor) heartbeat(ctx context.Context) {
	defer e.loops.Done()
	for {
		e.beat(ctx)
		if e.mayJudgeLiveness() {
			if _, err := e.rescue(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("rescue rows of stopped executors", "err", err)
			}
		}
		if !sleep(ctx, e.cfg.Heartbeat) {
			return
		}
	}
}

// beat writes one heartbeat, registering first (or again, when another executor
// declared this one dead and removed its row) as needed.
func (e *Executor) beat(ctx context.Context) {
	bctx, cancel := context.WithTimeout(ctx, e.cfg.Heartbeat)
	defer cancel()
	id, _, _ := e.live.get()
	if id != 0 {
		n, err := e.q.ExecutorHeartbeat(bctx, store.ExecutorHeartbeatParams{Now: e.now(), ID: id})
		switch {
		case err != nil:
			e.live.mu.Lock()
			e.live.okSince = time.Time{}
			e.live.mu.Unlock()
			if ctx.Err() == nil {
				e.log.Warn("executor heartbeat", "executor_id", id, "err", err)
			}
			return
		case n == 1:
			now := e.clock()
			e.live.mu.Lock()
			e.live.beatAt = now
			e.live.recovered(now)
			e.live.mu.Unlock()
			return
		}
		// Declared dead (silent for longer than deadAfter): the rows claimed under
		// that id may already be rescued. Jobs still holding them are released by
		// the workers (sendable), never sent; new claims carry the new id.
		e.log.Warn("executor was declared dead by another; registering again", "executor_id", id)
	}
	host, _ := os.Hostname()
	newID, err := e.q.ExecutorRegister(bctx, store.ExecutorRegisterParams{Host: host, Pid: int32(os.Getpid()), Now: e.now()})
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("register executor", "err", err)
		}
		return
	}
	now := e.clock()
	e.live.mu.Lock()
	e.live.id, e.live.beatAt = newID, now
	e.live.okSince = time.Time{} // a new registration starts a new run of heartbeats
	e.live.recovered(now)
	e.live.ids = append(e.live.ids, newID)
	e.live.mu.Unlock()
	e.log.Info("executor registered", "executor_id", newID)
	signal(e.wakeDispatch)
}

// mayJudgeLiveness reports whether this process has written heartbeats without a
// failure for a whole dead interval. Right after a database outage every
// executor's heartbeat is stale; waiting that long gives the live ones the time
// to beat again before anyone takes their rows.
func (e *Executor) mayJudgeLiveness() bool {
	id, _, okSince := e.live.get()
	return id != 0 && !okSince.IsZero() && e.clock().Sub(okSince) >= e.deadAfter()
}

// sendable reports whether a job claimed under executorID may still be handed to
// the provider: the claim's registration is the current one, and its last
// heartbeat is recent enough (two intervals of the three that make it dead) that
// no rescuer can have taken the row. Jobs claimed without a registration (tests
// driving the steps by hand) answer to their lease alone.
func (e *Executor) sendable(executorID int64) bool {
	if executorID == 0 {
		return true
	}
	id, beatAt, _ := e.live.get()
	return id == executorID && e.clock().Sub(beatAt) < 2*e.cfg.Heartbeat
}

// deregister removes this process's liveness row at the end of a graceful stop.
func (e *Executor) deregister(ctx context.Context) error {
	id, _, _ := e.live.get()
	if id == 0 {
		return nil
	}
	if err := e.q.ExecutorDeregister(ctx, id); err != nil {
		return err
	}
	e.live.mu.Lock()
	e.live.id = 0
	e.live.mu.Unlock()
	return nil
}

// everID returns every id this process has registered under.
func (l *liveness) everID() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64(nil), l.ids...)
}
