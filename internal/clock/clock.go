// Package clock is the one place a background service reads time from. It keeps
// two kinds of time apart, because mixing them is a bug no test sees:
//
//   - the date (Now): what work is dated and compared on — leases, retry times,
//     budgets, retention cutoffs. Tests inject it and hold it still or move it, so
//     they never sleep to reach a lease's end; a process may run skewed from the
//     database (Config.ClockSkew).
//   - the pace (Instant, timers, tickers): how long the process waits and how long
//     its steps take — poll intervals, idle marks, metric durations, time budgets.
//     It is always the monotonic wall clock, also when the date is held still: a
//     service whose poll timer waited on a held date would never poll again.
//
// A pace reading is an Instant, not a time.Time, so the compiler refuses to
// compare it with a date (dispatch.go once kept time.Now() and the injected clock
// side by side as two time.Time values).
package clock

import (
	"context"
	"time"
)

// Clock is a service's time. The zero value is the wall clock, undisturbed.
type Clock struct {
	now  func() time.Time // nil: the wall clock, and the database's now() in SQL
	skew time.Duration
}

// New is a clock whose date is now() (nil: the wall clock) shifted by skew.
// Skew plays a host whose clock is off from PostgreSQL's: it moves the date
// this process measures with, never a time the database is given (DB).
func New(now func() time.Time, skew time.Duration) Clock {
	return Clock{now: now, skew: skew}
}

// Now is the date, on this process's clock.
func (c Clock) Now() time.Time {
	if c.now == nil {
		return time.Now().Add(c.skew)
	}
	return c.now().Add(c.skew)
}

// DB is the date to hand the database's statements (their sqlc.narg('now')): nil
// for the database's own now(), the injected date otherwise, never skewed.
func (c Clock) DB() *time.Time {
	if c.now == nil {
		return nil
	}
	t := c.now()
	return &t
}

// Injected reports whether the date is a test's rather than the wall clock's.
func (c Clock) Injected() bool { return c.now != nil }

// Instant is a reading of the pace: comparable only with other Instants.
type Instant struct{ t time.Time }

// Instant reads the pace.
func (Clock) Instant() Instant { return Instant{time.Now()} }

// Since is the pace elapsed since i.
func (Clock) Since(i Instant) time.Duration { return time.Since(i.t) }

// Until is the pace left before i (negative once it has passed).
func (Clock) Until(i Instant) time.Duration { return time.Until(i.t) }

// UntilDeadline is the pace left before a context's deadline (contexts keep
// their deadlines on the wall clock).
func (Clock) UntilDeadline(d time.Time) time.Duration { return time.Until(d) }

// Add is the Instant d after i.
func (i Instant) Add(d time.Duration) Instant { return Instant{i.t.Add(d)} }

// Sub is the pace from j to i.
func (i Instant) Sub(j Instant) time.Duration { return i.t.Sub(j.t) }

// Before reports whether i comes before j.
func (i Instant) Before(j Instant) bool { return i.t.Before(j.t) }

// IsZero reports whether i was never read (the zero Instant, before every other).
func (i Instant) IsZero() bool { return i.t.IsZero() }

// NewTimer is a timer that fires after d of pace.
func (Clock) NewTimer(d time.Duration) *time.Timer { return time.NewTimer(d) }

// NewTicker is a ticker that ticks every d of pace.
func (Clock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }

// Sleep waits d of pace or until ctx ends; it reports whether ctx is still alive.
func (c Clock) Sleep(ctx context.Context, d time.Duration) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
