package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// shedRetryAfter is the Retry-After of a shed request, in seconds: the API is busy
// now, not broken, and a second is many requests' time.
const shedRetryAfter = 1

// inFlight bounds the API requests being worked on at once. Past the bound a
// request waits for a slot a short while (a burst, such as a dashboard page's
// requests, passes) and is then answered 503 with Retry-After, before it
// authenticates or touches the database, rather than waiting in a queue (for a
// pool connection, for a core): queued requests only make every answer later and
// take the processors and the database from the executor, which shares both.
type inFlight struct {
	slots chan struct{}
	wait  time.Duration
	shed  prometheus.Counter
}

func newInFlight(limit int, wait time.Duration, reg prometheus.Registerer) *inFlight {
	f := &inFlight{slots: make(chan struct{}, max(limit, 1)), wait: wait,
		shed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sendonce_http_shed_total",
			Help: "API requests answered 503 because the in-flight bound (SENDONCE_API_MAX_IN_FLIGHT) was reached.",
		})}
	reg.MustRegister(f.shed, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sendonce_http_in_flight",
		Help: "API requests in flight under the SENDONCE_API_MAX_IN_FLIGHT bound (the event stream, health, " +
			"metrics, opt-out and sign-up pages and provider webhooks are not counted).",
	}, func() float64 { return float64(len(f.slots)) }), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sendonce_http_max_in_flight",
		Help: "The bound on API requests in flight (SENDONCE_API_MAX_IN_FLIGHT, or the one derived from the processors).",
	}, func() float64 { return float64(cap(f.slots)) }))
	return f
}

// acquire takes a slot, waiting for one at most f.wait.
func (f *inFlight) acquire(ctx context.Context) bool {
	select {
	case f.slots <- struct{}{}:
		return true
	default:
	}
	if f.wait <= 0 {
		return false
	}
	t := time.NewTimer(f.wait)
	defer t.Stop()
	select {
	case f.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (f *inFlight) release() { <-f.slots }

// slot is the in-flight slot of one request, which it may give up while it waits
// for its client (awayFromSlot).
type slot struct {
	f    *inFlight
	held bool
}

type slotKey struct{}

// shed admits a request while fewer than the bound are in flight and answers the
// rest 503 with Retry-After, counted in sendonce_http_shed_total.
func (s *Server) shed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.inFlight.acquire(r.Context()) {
			s.shedRequest(w, r)
			return
		}
		sl := &slot{f: s.inFlight, held: true}
		defer func() {
			if sl.held {
				sl.f.release()
			}
		}()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), slotKey{}, sl)))
	})
}

// shedRequest answers 503 with Retry-After and counts it.
func (s *Server) shedRequest(w http.ResponseWriter, r *http.Request) {
	s.inFlight.shed.Inc()
	w.Header().Set("Retry-After", strconv.Itoa(shedRetryAfter))
	writeProblem(w, r, Problem{Type: problemBase + "overloaded", Title: "Overloaded",
		Status: http.StatusServiceUnavailable,
		Detail: fmt.Sprintf("the API is working on as many requests as it may (%d); retry after %d s",
			cap(s.inFlight.slots), shedRetryAfter)})
}

// awayFromSlot runs read, which waits for the client (reads its body), without the
// request's in-flight slot, so a client that sends its body slowly cannot hold one
// (a few such clients would otherwise shut everyone out); it then takes a slot
// again and reports whether it got one. A request that holds no slot (a route
// outside shed, or one with no body) runs read as it is.
func awayFromSlot(r *http.Request, read func()) bool {
	sl, _ := r.Context().Value(slotKey{}).(*slot)
	if sl == nil || !sl.held || r.Body == nil || r.Body == http.NoBody {
		read()
		return true
	}
	sl.f.release()
	sl.held = false
	read()
	sl.held = sl.f.acquire(r.Context())
	return sl.held
}

// unbounded gives the request's slot back before its handler runs, for the routes
// that may take minutes: the bulk import streams its body into the database for up
// to SENDONCE_IMPORT_TIMEOUT, and a campaign's test send and a sender's verify wait
// for a provider the tenant chose, up to its timeout. Holding slots that long, a
// few such requests (one tenant aiming its sender at a slow host) would shut every
// client out. They were admitted through the bound and are limited per key; their
// database connections still come from the API's pool.
func (s *Server) unbounded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sl, _ := r.Context().Value(slotKey{}).(*slot); sl != nil && sl.held {
			sl.f.release()
			sl.held = false
		}
		next.ServeHTTP(w, r)
	})
}
