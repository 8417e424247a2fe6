// Package testsignal lets a test wait on the moment a background service
// reaches (a claim made, an acknowledgement flushed, a heartbeat written, a
// delivery recorded) instead of sleeping or polling the database for its traces.
//
// A service keeps a struct of Signals, one per moment. In production none is
// initialised and Signal costs a nil check. A test calls Init before starting the
// service, then Wait or WaitFor, whose timeout fires only when the code is wrong.
package testsignal

import (
	"fmt"
	"time"
)

// Timeout bounds every wait: long enough for a loaded CI machine, so that a
// wait that times out means the moment never came.
const Timeout = time.Minute

// capacity is how many signals a test may leave unread before Signal fails:
// a service signalling more often than that (a heartbeat in a long test) is
// waited on with WaitFor, which reads them as they come.
const capacity = 10000

// TB is the part of testing.TB a wait uses (the product does not import testing).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Signal is one moment a service reports, with a value describing it.
type Signal[T any] struct {
	ch chan T
}

// Init readies s for a test; call it before the service can signal.
func (s *Signal[T]) Init() { s.ch = make(chan T, capacity) }

// Signal reports the moment; without Init it does nothing. It never blocks the
// service: a test that let capacity signals pile up unread is broken, and
// panics say so.
func (s *Signal[T]) Signal(v T) {
	if s.ch == nil {
		return
	}
	select {
	case s.ch <- v:
	default:
		panic(fmt.Sprintf("testsignal: %d signals of %T unread", capacity, v))
	}
}

// Wait returns the next signal, failing tb when none comes within Timeout.
func (s *Signal[T]) Wait(tb TB) T {
	tb.Helper()
	return s.WaitFor(tb, func(T) bool { return true })
}

// WaitFor reads signals until one satisfies ok and returns it, failing tb when
// none does within Timeout. The signals read before it are gone.
func (s *Signal[T]) WaitFor(tb TB, ok func(T) bool) T {
	tb.Helper()
	var zero T
	if s.ch == nil {
		tb.Fatalf("testsignal: waiting on a signal that was never initialised")
		return zero
	}
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	for {
		select {
		case v := <-s.ch:
			if ok(v) {
				return v
			}
		case <-timer.C:
			tb.Fatalf("testsignal: no %T signal within %s", zero, Timeout)
			return zero
		}
	}
}

// Drain returns the signals not read yet, without waiting: what a test reads
// after the service stopped to describe what happened (a failure's log).
func (s *Signal[T]) Drain() []T {
	var out []T
	for {
		select {
		case v := <-s.ch:
			out = append(out, v)
		default:
			return out
		}
	}
}
