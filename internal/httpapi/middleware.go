package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/logging"
)

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// requestID takes a sane X-Request-Id from the caller or makes one, echoes it, and
// puts it in the context for logs and problem bodies.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !validRequestID.MatchString(id) {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(logging.WithRequestID(r.Context(), id)))
	})
}

// recoverer turns a panic into a logged 500 problem.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				writeError(w, r, s.Logger, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sendonce_http_requests_total", Help: "HTTP requests by route and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sendonce_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// observe logs each request and records its metrics under the route pattern (not
// the raw path, which would explode the label set).
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		elapsed := time.Since(start)
		s.metrics.requests.WithLabelValues(r.Method, route, fmt.Sprint(status)).Inc()
		s.metrics.duration.WithLabelValues(r.Method, route).Observe(elapsed.Seconds())
		s.Logger.DebugContext(r.Context(), "http request", "method", r.Method, "route", route,
			"status", status, "bytes", ww.BytesWritten(), "ms", elapsed.Milliseconds())
	})
}

type accountKey struct{}

// authenticate requires `Authorization: Bearer <key>` and puts the key's account in
// the context. Every tenant handler reads the account from there, never from input.
// Failed attempts are limited per client address (addrLimits); a malformed key of
// any shape is a plain 401.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr, now := s.clientAddr(r), time.Now()
		if delay := s.authFails.wait(addr, now); delay > 0 {
			s.tooManyRequests(w, r, delay, "too many failed authentications from this address; retry after %d s")
			return
		}
		if _, err := r.Cookie(sessionCookie); err == nil && r.Header.Get("Authorization") == "" {
			s.authenticateSession(w, r, next) // the dashboard
			return
		}
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			s.authFails.fail(addr, now)
			writeError(w, r, s.Logger, apperr.New(apperr.Unauthorized, "a valid API key is required: Authorization: Bearer <key>"))
			return
		}
		key, err := s.Accounts.AuthenticateKey(r.Context(), strings.TrimSpace(token))
		if err != nil {
			if apperr.Is(err, apperr.Unauthorized) {
				s.authFails.fail(addr, now)
			}
			writeError(w, r, s.Logger, err)
			return
		}
		ctx := context.WithValue(r.Context(), apiKeyKey{}, key.ID)
		ctx = withPrincipal(ctx, principalForKey(key))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

type apiKeyKey struct{}

// principalForKey is the principal of an API key: the key acts, with its
// permissions and its list restriction.
func principalForKey(k account.Caller) principal {
	return principal{AccountID: k.AccountID, Permissions: k.Permissions, ListIDs: k.ListIDs,
		Actor: access.Actor{Type: access.ActorKey, ID: k.ID, Label: k.Name}}
}

// routePattern is the matched route's pattern, such as /v1/campaigns/{id}/pause.
func routePattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		return rc.RoutePattern()
	}
	return ""
}

// apiKeyID returns the id of the API key that authenticated the request (or that
// the request's dashboard session was signed in with; 0 for none).
func apiKeyID(r *http.Request) int64 {
	id, _ := r.Context().Value(apiKeyKey{}).(int64)
	return id
}

// accountID returns the authenticated account of the request.
func accountID(r *http.Request) int64 {
	id, ok := r.Context().Value(accountKey{}).(int64)
	if !ok {
		panic("httpapi: tenant route without authenticate middleware")
	}
	return id
}
