// Package backoff is the one way sendonce spaces retries: a capped exponential
// schedule or a schedule written out step by step, spread by jitter so a burst of
// failures does not come back as a burst. The executor's message retries, its
// loops retrying a failing database step and the event worker's deliveries all
// take their waits from here; each keeps its own documented parameters
// (docs/executor.md, docs/events.md).
package backoff

import (
	"math/rand/v2"
	"time"
)

// Exponential is Base, doubled for each failure after the first, capped at Max.
type Exponential struct {
	Base, Max time.Duration
}

// Delay is the wait after the n-th failure in a row: Base·2^(n−1), at most Max;
// zero before any failure (n ≤ 0) or without a Base.
func (e Exponential) Delay(n int) time.Duration {
	if n <= 0 || e.Base <= 0 {
		return 0
	}
	d := e.Base
	for i := 1; i < n && d < e.Max; i++ {
		d *= 2
	}
	return min(d, e.Max)
}

// Steps is a schedule written out: the wait after the n-th failure is its n-th
// step; past the end, the last step repeats.
type Steps []time.Duration

// Delay is the wait after the n-th failure; zero for n ≤ 0 or an empty schedule.
func (s Steps) Delay(n int) time.Duration {
	if n <= 0 || len(s) == 0 {
		return 0
	}
	return s[min(n, len(s))-1]
}

// Total is the sum of the steps: how long the whole schedule takes.
func (s Steps) Total() time.Duration {
	var t time.Duration
	for _, d := range s {
		t += d
	}
	return t
}

// Jitter spreads d uniformly over [lo·d, hi·d] (0 ≤ lo ≤ hi), so retries of many
// failures that happened together do not arrive together.
func Jitter(d time.Duration, lo, hi float64) time.Duration {
	if d <= 0 {
		return 0
	}
	from := time.Duration(float64(d) * lo)
	span := int64(float64(d) * (hi - lo))
	if span <= 0 {
		return from
	}
	return from + time.Duration(rand.Int64N(span+1))
}

// Step is a loop's run of retries on an Exponential schedule: Next is the wait
// after one more failure, Reset starts over after a success. Not safe for
// concurrent use: each loop has its own.
type Step struct {
	policy Exponential
	n      int
}

// NewStep returns a Step on policy, before any failure.
func NewStep(policy Exponential) *Step { return &Step{policy: policy} }

// Next counts one more failure and returns the wait after it.
func (s *Step) Next() time.Duration {
	if s.policy.Delay(s.n) < s.policy.Max {
		s.n++ // past the cap the count stops: the wait no longer grows
	}
	return s.policy.Delay(s.n)
}

// Reset starts over, after a success.
func (s *Step) Reset() { s.n = 0 }
