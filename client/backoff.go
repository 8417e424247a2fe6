package client

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The SDK is a module of its own, so it carries its own small retry arithmetic:
// the same rules as the service's (a capped exponential wait spread by jitter, and
// RFC 9110's Retry-After capped at a day), without importing the service.

// maxRetryAfter is the longest wait a Retry-After header is taken for: a server
// asking for more gets a day (and MaxWait caps it further).
const maxRetryAfter = 24 * time.Hour

// wait is the pause before attempt+1 when the server named none: exponential from
// 200 ms (doubled per failed attempt, capped at limit and at 200 ms·2¹⁰), spread
// uniformly over its upper half.
func wait(attempt int, limit time.Duration) time.Duration {
	limit = min(limit, 200*time.Millisecond<<10)
	d := 200 * time.Millisecond
	for i := 0; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	if d <= 0 {
		return 0
	}
	half := int64(d / 2)
	return time.Duration(half + rand.Int64N(half+1))
}

// retryAfter reads a Retry-After value (RFC 9110 §10.2.3): delay-seconds or an
// HTTP-date, as a wait from now, at most maxRetryAfter; ok is false when it is
// absent or neither form (a negative number, a fraction, garbage).
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true // beyond int64 is still a valid delay
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfter), true
}
