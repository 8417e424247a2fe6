package executor

import (
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sendonce/sendonce/internal/backoff"
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
	return backoff.Exponential{Base: p.base, Max: p.max}.Delay(attempts)
}

// jittered is delay spread uniformly over its upper half, so a burst of failures
// does not come back as a burst.
func (p retryPolicy) jittered(attempts int) time.Duration {
	return backoff.Jitter(p.delay(attempts), 0.5, 1)
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

// stepBackoff is the capped exponential wait of a loop retrying a failing
// database step (dispatch, acknowledge, listen): next returns the wait after one
// more failure, reset goes back to the first wait after a success.
type stepBackoff struct{ *backoff.Step }

func newStepBackoff(first, max time.Duration) stepBackoff {
	return stepBackoff{backoff.NewStep(backoff.Exponential{Base: first, Max: max})}
}

func (b stepBackoff) next() time.Duration { return b.Next() }

func (b stepBackoff) reset() { b.Reset() }
