package executor

import (
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// retryPolicy is the one schedule by which a recipient's message is tried again:
// after a temporary failure (the worker) and after an expired lease (the rescuer,
// through SendRescueExpired's expiry_delays). Everything that waits for a retry
// asks it.
type retryPolicy struct {
	base, max time.Duration
}

// delay is the wait after a row's failed attempt number attempts: base, doubled for
// each attempt after the first, capped at max; zero before any attempt.
func (p retryPolicy) delay(attempts int) time.Duration {
	if attempts <= 0 {
		return 0
	}
	d := p.base
	for i := 1; i < attempts && d < p.max; i++ {
		d *= 2
	}
	return min(d, p.max)
}

// jittered is delay spread uniformly over its upper half, so a burst of failures
// does not come back as a burst.
func (p retryPolicy) jittered(attempts int) time.Duration {
	d := p.delay(attempts)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// afterExpiry is the wait after a lease expired on attempt number attempts: the
// schedule one attempt behind, so the first expiry replays at once (one crash
// should not delay a campaign) while a message that keeps killing its process
// backs off like any failing one.
func (p retryPolicy) afterExpiry(attempts int) time.Duration { return p.delay(attempts - 1) }

// expiryTable is afterExpiry for attempts 1..n+1 as SQL intervals, indexed by the
// rescuer (SendRescueExpired) with a row's attempts, the last entry standing for
// every larger count.
func (p retryPolicy) expiryTable(n int) []pgtype.Interval {
	out := make([]pgtype.Interval, 0, n+1)
	for a := 1; a <= n+1; a++ {
		out = append(out, interval(p.afterExpiry(a)))
	}
	return out
}

// stepBackoff is the capped exponential wait of a loop retrying a failing database
// step (dispatch, acknowledge, listen): next returns the wait and doubles it, reset
// goes back to the first wait after a success.
type stepBackoff struct {
	first, max, cur time.Duration
}

func newStepBackoff(first, max time.Duration) *stepBackoff {
	return &stepBackoff{first: first, max: max, cur: first}
}

func (b *stepBackoff) next() time.Duration {
	d := b.cur
	b.cur = min(2*b.cur, b.max)
	return d
}

func (b *stepBackoff) reset() { b.cur = b.first }
