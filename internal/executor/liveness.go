package executor

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/internal/liveness"
)

// The executor's registration in the executors table is a liveness.Registration
// (e.live): the heartbeat loop keeps it fresh, claims are stamped with its id,
// workers consult it before every send, and the loops that back off through a
// database outage (claims, acknowledgements; backoffs up to 10 s) wake when it
// finds the database reachable again (sleepUnlessBack).

func (e *Executor) newLiveness() *liveness.Registration {
	return liveness.New(e.q, liveness.Options{Heartbeat: e.cfg.Heartbeat, Clock: e.clk, Logger: e.log, Name: "executor"})
}

// sleepUnlessBack waits d, or less when the heartbeat finds the database
// reachable again after back (e.live.Back(), taken before the attempt that
// failed) was taken. It reports whether ctx is still alive.
func (e *Executor) sleepUnlessBack(ctx context.Context, back <-chan struct{}, d time.Duration) bool {
	return e.live.SleepUnlessBack(ctx, back, d)
}

// deadAfter is how long an executor's heartbeat may be silent before its rows are
// rescued (liveness.Registration.DeadAfter).
func (e *Executor) deadAfter() time.Duration { return e.live.DeadAfter() }

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
		if !e.clk.Sleep(ctx, e.cfg.Heartbeat) {
			return
		}
	}
}

// beat writes one heartbeat, registering first (or again, when another executor
// declared this one dead and removed its row) as needed. Jobs still holding rows
// claimed under a dead id are released by the workers (sendable), never sent; a
// new registration wakes the dispatcher, whose claims wait for one.
func (e *Executor) beat(ctx context.Context) {
	if e.live.Beat(ctx) {
		signal(e.wakeDispatch)
	}
}

// mayJudgeLiveness reports whether this process has written heartbeats without a
// failure for a whole dead interval (liveness.Registration.MayJudge).
func (e *Executor) mayJudgeLiveness() bool { return e.live.MayJudge() }

// sendable reports whether a job claimed under executorID may still be handed to
// the provider (liveness.Registration.Holds): no rescuer can have taken the row.
func (e *Executor) sendable(executorID int64) bool { return e.live.Holds(executorID) }

// deregister removes this process's liveness row at the end of a graceful stop.
func (e *Executor) deregister(ctx context.Context) error { return e.live.Deregister(ctx) }
