package httpapi

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// keyedLimits holds one token bucket per key (a client address, an account's
// public id) for the public routes, in this process only: N replicas admit up to N
// times the rate. Memory is bounded: past maxTrackedAddrs keys, full buckets
// (quiet keys) are forgotten first, and everything if none is.
type keyedLimits struct {
	perSecond rate.Limit
	burst     int
	mu        sync.Mutex
	byKey     map[string]*rate.Limiter
}

func newKeyedLimits(perSecond float64, burst int) *keyedLimits {
	if burst < 1 {
		burst = 1
	}
	return &keyedLimits{perSecond: rate.Limit(perSecond), burst: burst, byKey: map[string]*rate.Limiter{}}
}

// take spends one token of key's bucket and returns 0, or, when the bucket is
// empty, spends nothing and returns how long to wait. A rate of 0 disables it.
func (l *keyedLimits) take(key string, now time.Time) time.Duration {
	if l.perSecond <= 0 {
		return 0
	}
	res := l.limiter(key, now).ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d
	}
	return 0
}

// limiter returns key's bucket, made on first use. Past maxTrackedAddrs keys the
// map is swept first: full buckets (quiet keys) go, and everything if none is full.
func (l *keyedLimits) limiter(key string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lim, ok := l.byKey[key]; ok {
		return lim
	}
	if len(l.byKey) >= maxTrackedAddrs {
		for k, x := range l.byKey {
			if x.TokensAt(now) >= float64(l.burst) {
				delete(l.byKey, k)
			}
		}
		if len(l.byKey) >= maxTrackedAddrs {
			clear(l.byKey)
		}
	}
	lim := rate.NewLimiter(l.perSecond, l.burst)
	l.byKey[key] = lim
	return lim
}

// tracked is how many keys are held (tests).
func (l *keyedLimits) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byKey)
}
