package httpapi

import (
	"crypto/sha256"
	"math"
	"net"
	"net/http"
	"net/netip"
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
			s.tooManyRequests(w, r, delay, "too many requests for this API key; retry after %d s")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// addrLimits holds one token bucket of failed authentications per client address.
// A failure spends a token; an address with none left is answered 429 before its
// credentials are even looked at, which bounds both guessing and the database work
// it causes. The buckets are keyedLimits', so their memory is bounded the same way.
type addrLimits struct{ keyedLimits }

// maxTrackedAddrs bounds the memory of addrLimits and keyedLimits.
const maxTrackedAddrs = 10_000

func newAddrLimits(perSecond float64, burst int) *addrLimits {
	return &addrLimits{*newKeyedLimits(perSecond, burst)}
}

// wait returns how long addr must wait before its next attempt (0: it may try now).
func (l *addrLimits) wait(addr string, now time.Time) time.Duration {
	if l.perSecond <= 0 {
		return 0
	}
	l.mu.Lock()
	lim, ok := l.byKey[addr]
	l.mu.Unlock()
	if !ok {
		return 0
	}
	res := lim.ReserveN(now, 1)
	defer res.CancelAt(now)
	return res.DelayFrom(now)
}

// fail spends one token of addr's bucket.
func (l *addrLimits) fail(addr string, now time.Time) {
	if l.perSecond <= 0 {
		return
	}
	l.limiter(addr, now).AllowN(now, 1)
}

// clientAddr is the address a request came from, as a rate-limit key: the IP of an
// IPv4 client, the /64 of an IPv6 one (one host usually holds a whole /64). It is
// the peer, unless the peer is one of SENDONCE_TRUSTED_PROXIES: then it is the
// rightmost X-Forwarded-For address that is not a trusted proxy (each proxy
// appends the address it saw, so everything left of that may be forged).
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if s.trustedProxy(ip) {
		ip = s.forwardedClient(r, ip)
	}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

func (s *Server) trustedProxy(ip netip.Addr) bool {
	for _, p := range s.trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// forwardedClient walks X-Forwarded-For from the right past trusted proxies and
// returns the first address that is not one; peer when the header is missing or
// an entry does not parse (what is left of a bad entry cannot be trusted).
func (s *Server) forwardedClient(r *http.Request, peer netip.Addr) netip.Addr {
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		ip, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return client
		}
		client = ip.Unmap()
		if !s.trustedProxy(client) {
			return client
		}
	}
	return client
}

// tooManyRequests answers 429 with a whole-second Retry-After of at least 1.
func (s *Server) tooManyRequests(w http.ResponseWriter, r *http.Request, delay time.Duration, format string) {
	secs := int(math.Ceil(delay.Seconds()))
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, r, s.Logger, apperr.New(apperr.RateLimited, format, secs))
}
