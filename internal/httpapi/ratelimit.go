package httpapi

import (
	"crypto/sha256"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/sendonce/sendonce/internal/apperr"
)

// rateLimits holds one token bucket per API key. Keys are held by a hash of the
// token, so the map never keeps a secret in memory longer than a request does.
type rateLimits struct {
	perSecond rate.Limit
	burst     int
	mu        sync.Mutex
	byKey     map[[32]byte]*rate.Limiter
}

func newRateLimits(perSecond float64, burst int) *rateLimits {
	if burst < 1 {
		burst = 1
	}
	return &rateLimits{perSecond: rate.Limit(perSecond), burst: burst, byKey: map[[32]byte]*rate.Limiter{}}
}

func (l *rateLimits) limiter(token string) *rate.Limiter {
	k := sha256.Sum256([]byte(token))
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.byKey[k]
	if !ok {
		lim = rate.NewLimiter(l.perSecond, l.burst)
		l.byKey[k] = lim
	}
	return lim
}

// rateLimit answers 429 with Retry-After (whole seconds, at least 1) when the
// caller's API key has spent its bucket. It runs after authenticate, so only valid
// keys get a bucket. A rate of 0 disables it.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	if s.limits.perSecond <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		lim := s.limits.limiter(strings.TrimSpace(token))
		now := time.Now()
		res := lim.ReserveN(now, 1)
		if delay := res.DelayFrom(now); delay > 0 {
			res.CancelAt(now)
			secs := int(math.Ceil(delay.Seconds()))
			if secs < 1 {
				secs = 1
			}
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeError(w, r, s.Logger, apperr.New(apperr.RateLimited, "too many requests for this API key; retry after %d s", secs))
			return
		}
		next.ServeHTTP(w, r)
	})
}
