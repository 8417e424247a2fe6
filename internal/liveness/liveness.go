// Package liveness is a process's registration in the executors table (DESIGN.md
// §4, "Liveness, not only leases"), shared by the executor (sends) and the event
// worker (webhook deliveries). A process registers a row, refreshes its heartbeat,
// and stamps its claims with the row's id; a row silent for three heartbeats is
// dead, and the rows it claimed are free at once instead of at their lease.
//
// The rule both callers follow: a process judges others dead only after a whole
// dead interval of good heartbeats of its own. Right after a database outage (a
// failover, a restart) every heartbeat is stale, the live processes' too; waiting
// a dead interval gives them the time to beat again before anyone takes their rows.
package liveness

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/sendonce/sendonce/internal/clock"
	"github.com/sendonce/sendonce/internal/store"
)

// Queries is the part of the generated queries a registration uses.
type Queries interface {
	ExecutorRegister(ctx context.Context, arg store.ExecutorRegisterParams) (int64, error)
	ExecutorHeartbeat(ctx context.Context, arg store.ExecutorHeartbeatParams) (int64, error)
	ExecutorDeregister(ctx context.Context, id int64) error
}

// Options configure a Registration.
type Options struct {
	// Heartbeat is how often the caller beats; three of them silent make a process dead.
	Heartbeat time.Duration
	// Clock is the caller's clock: its date dates the beats here, and an
	// injected date (tests) is what the statements use instead of the database's
	// now() (Clock.DB). The zero Clock is the wall clock and now() in SQL.
	Clock clock.Clock
	// Logger and Name ("executor", "event worker") label the log lines.
	Logger *slog.Logger
	Name   string
}

// Registration is one process's row in the executors table and what it knows of
// its own heartbeats. Its methods are safe for concurrent use.
type Registration struct {
	q    Queries
	opts Options

	// beating serialises beats: two goroutines finding no registration must not
	// register twice.
	beating sync.Mutex

	mu sync.Mutex
	id int64 // 0 until registered (and after Deregister)
	// ids is every id this process has registered under (a new one each time it
	// was declared dead): rows stamped with any of them are its own, which is how
	// the rows of a claim whose answer was lost are found (LostClaims).
	ids []int64
	// beatAt is when the last heartbeat was written (on this process's clock, read
	// after the statement returned, so the row's heartbeat_at is no later).
	beatAt time.Time
	// okSince starts the current run of heartbeats written without a failure.
	okSince time.Time
	// back is closed (and replaced) when a heartbeat is written after a failure:
	// the database is reachable again (a failover's new primary, a restart).
	back chan struct{}
}

// New returns an unregistered Registration; the first Beat registers it.
func New(q Queries, opts Options) *Registration {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Name == "" {
		opts.Name = "executor"
	}
	return &Registration{q: q, opts: opts}
}

// DeadAfter is how long a heartbeat may be silent before the process is dead:
// three heartbeat intervals, so one slow or lost beat is not a death.
func (r *Registration) DeadAfter() time.Duration { return 3 * r.opts.Heartbeat }

// SQLNow is the time the statements compare heartbeats and leases with: nil for
// the database's now() (one clock for every replica), or the injected clock.
func (r *Registration) SQLNow() *time.Time { return r.opts.Clock.DB() }

func (r *Registration) clock() time.Time { return r.opts.Clock.Now() }

// Beat writes one heartbeat, registering first (or again, when another process
// declared this one dead and deleted its row) as needed. It reports whether it
// registered a new id. A failed statement ends the run of good heartbeats.
func (r *Registration) Beat(ctx context.Context) (registered bool) {
	r.beating.Lock()
	defer r.beating.Unlock()
	return r.beat(ctx)
}

// BeatIfDue beats only when no heartbeat was written for a Heartbeat interval, so
// a caller may call it before every claim without writing more often than that.
func (r *Registration) BeatIfDue(ctx context.Context) (registered bool) {
	r.beating.Lock()
	defer r.beating.Unlock()
	r.mu.Lock()
	due := r.id == 0 || r.clock().Sub(r.beatAt) >= r.opts.Heartbeat
	r.mu.Unlock()
	if !due {
		return false
	}
	return r.beat(ctx)
}

func (r *Registration) beat(ctx context.Context) bool {
	bctx, cancel := context.WithTimeout(ctx, r.opts.Heartbeat)
	defer cancel()
	id := r.ID()
	if id != 0 {
		n, err := r.q.ExecutorHeartbeat(bctx, store.ExecutorHeartbeatParams{Now: r.SQLNow(), ID: id})
		switch {
		case err != nil:
			r.mu.Lock()
			r.okSince = time.Time{}
			r.mu.Unlock()
			if ctx.Err() == nil {
				r.opts.Logger.Warn(r.opts.Name+" heartbeat", "executor_id", id, "err", err)
			}
			return false
		case n == 1:
			now := r.clock()
			r.mu.Lock()
			r.beatAt = now
			r.recovered(now)
			r.mu.Unlock()
			return false
		}
		// Declared dead (silent for longer than DeadAfter): the rows claimed under
		// that id may already be taken by others. The caller's work still holding
		// them is fenced (Holds, the attempts fences); new claims carry the new id.
		r.opts.Logger.Warn(r.opts.Name+" was declared dead by another; registering again", "executor_id", id)
	}
	host, _ := os.Hostname()
	newID, err := r.q.ExecutorRegister(bctx, store.ExecutorRegisterParams{Host: host, Pid: int32(os.Getpid()), Now: r.SQLNow()})
	if err != nil {
		r.mu.Lock()
		r.okSince = time.Time{}
		r.mu.Unlock()
		if ctx.Err() == nil {
			r.opts.Logger.Warn("register "+r.opts.Name, "err", err)
		}
		return false
	}
	now := r.clock()
	r.mu.Lock()
	r.id, r.beatAt = newID, now
	r.okSince = time.Time{} // a new registration starts a new run of heartbeats
	r.recovered(now)
	r.ids = append(r.ids, newID)
	r.mu.Unlock()
	r.opts.Logger.Info(r.opts.Name+" registered", "executor_id", newID)
	return true
}

// recovered records a heartbeat written at now and, when it ends a run of
// failures, wakes every loop backing off through the outage. Called with mu held.
func (r *Registration) recovered(now time.Time) {
	if !r.okSince.IsZero() {
		return
	}
	r.okSince = now
	if r.back != nil {
		close(r.back)
		r.back = nil
	}
}

// ID is the id that stamps this process's claims, 0 before it could register.
func (r *Registration) ID() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id
}

// Self is ID as the statements take it: nil before registration.
func (r *Registration) Self() *int64 {
	if id := r.ID(); id != 0 {
		return &id
	}
	return nil
}

// IDs returns every id this process has registered under.
func (r *Registration) IDs() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int64(nil), r.ids...)
}

// MayJudge reports whether this process has written heartbeats without a failure
// for a whole dead interval, and so may judge others dead.
func (r *Registration) MayJudge() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id != 0 && !r.okSince.IsZero() && r.clock().Sub(r.okSince) >= r.DeadAfter()
}

// Holds reports whether work claimed under id may still go ahead: the claim's
// registration is the current one, and its last heartbeat is recent enough (two
// intervals of the three that make it dead) that no one can have taken the row.
// Claims without a registration (id 0: tests driving the steps by hand) answer to
// their lease alone.
func (r *Registration) Holds(id int64) bool {
	if id == 0 {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id == id && r.clock().Sub(r.beatAt) < 2*r.opts.Heartbeat
}

// Back returns the channel the next recovery (a heartbeat written after a
// failure) closes.
func (r *Registration) Back() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.back == nil {
		r.back = make(chan struct{})
	}
	return r.back
}

// SleepUnlessBack waits d, or less when a heartbeat finds the database reachable
// again, so loops that back off through an outage resume within a heartbeat of a
// failover's promotion instead of a backoff later. back is what Back returned
// before the attempt that failed: a recovery between that failure and this sleep
// has closed it already, where a channel taken now would wait for the next one.
// It reports whether ctx is still alive.
func (r *Registration) SleepUnlessBack(ctx context.Context, back <-chan struct{}, d time.Duration) bool {
	t := r.opts.Clock.NewTimer(d)
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

// Deregister deletes the row at the end of a graceful stop, once the caller's
// work in flight has settled: whatever is still stamped with it is free at once.
func (r *Registration) Deregister(ctx context.Context) error {
	r.beating.Lock()
	defer r.beating.Unlock()
	id := r.ID()
	if id == 0 {
		return nil
	}
	if err := r.q.ExecutorDeregister(ctx, id); err != nil {
		return err
	}
	r.mu.Lock()
	r.id = 0
	r.mu.Unlock()
	return nil
}

// State returns the current id, when the last heartbeat was written and when the
// current run of good heartbeats began.
func (r *Registration) State() (id int64, beatAt, okSince time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id, r.beatAt, r.okSince
}

// Assume sets the state without the database, for tests that drive a caller's
// steps by hand (a registration "beaten all along", a fresh one).
func (r *Registration) Assume(id int64, beatAt, okSince time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.id, r.beatAt, r.okSince = id, beatAt, okSince
}
