package event

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/sendonce/sendonce/internal/store"
)

// liveness is the worker's row in the executors table, the same liveness the
// executor keeps for sends (DESIGN.md §4): the deliveries the worker claims carry
// its id, and a delivery whose worker stopped beating for three heartbeats is
// claimed again at once. The worker registers a row of its own: it runs beside
// the executor but holds its own claims, and the executor's sweep of dead rows
// (ExecutorDeleteDead) treats it like any other.
type liveness struct {
	mu sync.Mutex
	id int64 // 0 until registered
	// beatAt is when the last heartbeat was written, on the worker's clock.
	beatAt time.Time
	// okSince starts the current run of heartbeats written without a failure: only
	// after a whole dead interval of them may this worker judge others dead (after a
	// database outage every heartbeat is stale, the live workers' too).
	okSince time.Time
}

// deadAfter is how long a worker's heartbeat may be silent before its deliveries
// are free: three heartbeats, so one slow or lost beat is not a death.
func (w *Worker) deadAfter() time.Duration { return 3 * w.opts.Heartbeat }

// sqlNow is the clock the statements compare heartbeats and leases with: the
// database's now() (one clock for every replica), unless a test injected one.
func (w *Worker) sqlNow() *time.Time {
	if !w.clocked {
		return nil
	}
	now := w.opts.Now()
	return &now
}

// beat registers the worker, or refreshes its heartbeat once one is due. A row
// that another process deleted as dead is registered again under a new id (the
// deliveries under the old one may be claimed by others already: at least once).
func (w *Worker) beat(ctx context.Context) {
	now := w.opts.Now()
	w.live.mu.Lock()
	id, beatAt := w.live.id, w.live.beatAt
	w.live.mu.Unlock()
	if id != 0 && now.Sub(beatAt) < w.opts.Heartbeat {
		return
	}
	bctx, cancel := context.WithTimeout(ctx, w.opts.Heartbeat)
	defer cancel()
	q := store.New(w.pool)
	if id != 0 {
		n, err := q.ExecutorHeartbeat(bctx, store.ExecutorHeartbeatParams{Now: w.sqlNow(), ID: id})
		if err != nil {
			w.live.mu.Lock()
			w.live.okSince = time.Time{}
			w.live.mu.Unlock()
			if ctx.Err() == nil {
				w.log.Warn("event worker heartbeat", "executor_id", id, "err", err)
			}
			return
		}
		if n == 1 {
			w.live.mu.Lock()
			w.live.beatAt = now
			if w.live.okSince.IsZero() {
				w.live.okSince = now
			}
			w.live.mu.Unlock()
			return
		}
		w.log.Warn("event worker was declared dead by another; registering again", "executor_id", id)
	}
	host, _ := os.Hostname()
	newID, err := q.ExecutorRegister(bctx, store.ExecutorRegisterParams{Host: host, Pid: int32(os.Getpid()), Now: w.sqlNow()})
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("register event worker", "err", err)
		}
		return
	}
	w.live.mu.Lock()
	w.live.id, w.live.beatAt, w.live.okSince = newID, now, now
	w.live.mu.Unlock()
}

// liveness returns the id that stamps this worker's claims (nil before it could
// register) and whether it may judge other workers dead: only after a whole dead
// interval of heartbeats of its own written without a failure.
func (w *Worker) liveness() (*int64, bool) {
	w.live.mu.Lock()
	defer w.live.mu.Unlock()
	if w.live.id == 0 {
		return nil, false
	}
	id := w.live.id
	return &id, !w.live.okSince.IsZero() && w.opts.Now().Sub(w.live.okSince) >= w.deadAfter()
}

// deregister removes the worker's row once its deliveries in flight have settled:
// whatever it still holds is free at once.
func (w *Worker) deregister() {
	w.live.mu.Lock()
	id := w.live.id
	w.live.id = 0
	w.live.mu.Unlock()
	if id == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := store.New(w.pool).ExecutorDeregister(ctx, id); err != nil {
		w.log.Warn("deregister event worker", "executor_id", id, "err", err)
	}
}
