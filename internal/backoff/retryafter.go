package backoff

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRetryAfter is the longest wait a Retry-After header is taken for: a day. A
// peer asking for more (a typo, a year-long date, a value near the integer limit)
// gets a day; the caller's own schedule (or giving up) takes over from there.
const MaxRetryAfter = 24 * time.Hour

// RetryAfter reads a Retry-After header value (RFC 9110 §10.2.3): delay-seconds (a
// run of digits) or an HTTP-date, as a wait from now, at most MaxRetryAfter. ok is
// false when the value is absent or neither form — a negative number, a fraction,
// garbage — so the caller's own schedule applies. A date in the past is a wait of 0.
func RetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if digits(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true // too large for int64 is still a valid delay
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), MaxRetryAfter), true // Sub saturates: no overflow
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
