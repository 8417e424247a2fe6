package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// shedRetryAfter is the Retry-After of a shed request, in seconds: the API is busy
// now, not broken, and a second is many requests' time.
const shedRetryAfter = 1

// inFlight bounds the API requests being worked on at once. Past the bound a
// request waits in a short queue for a slot and is then answered 503 with
// Retry-After, before it authenticates or touches the database. The queue is
// bounded by count (maxQueue) and by time, and adapts to load as CoDel does: while
// it drains now and then, a burst (a dashboard page's requests, a client's fan-out)
// waits up to wait in arrival order and is served; once the queue has stood
// without draining for longer than standingAfter, the bound is overloaded, not
// bursting, and a newcomer waits at most standingWait and is served newest first
// (adaptive LIFO), so what is admitted is answered quickly and the rest is shed at
// once instead of queueing behind work it cannot catch up with. Queued requests
// take no database connection and no processor: only admitted ones do, so the
// executor, which shares both, keeps its share.
type inFlight struct {
	limit         int
	maxQueue      int
	wait          time.Duration
	standingWait  time.Duration
	standingAfter time.Duration
	now           func() time.Time
	shed          prometheus.Counter

	mu    sync.Mutex
	inUse int
	// queue holds the waiting requests in arrival order.
	queue []*waiter
	// emptyAt is when the queue was last empty: a queue that has not been
	// empty since more than standingAfter ago is standing.
	emptyAt time.Time
}

// waiter is one request waiting for a slot; granted (under inFlight.mu) says the
// slot was handed to it, and ready is closed then.
type waiter struct {
	ready   chan struct{}
	granted bool
}

// Adaptive queue constants: CoDel's target and interval, as Facebook's adaptive
// LIFO uses them for request queues (a standing queue is one that has not drained
// in 100 ms; then a request waits at most 5 ms).
const (
	queueStandingAfter = 100 * time.Millisecond
	queueStandingWait  = 5 * time.Millisecond
)

func newInFlight(limit, maxQueue int, wait time.Duration, reg prometheus.Registerer) *inFlight {
	f := &inFlight{limit: max(limit, 1), maxQueue: max(maxQueue, 0), wait: wait,
		standingWait: min(queueStandingWait, wait), standingAfter: queueStandingAfter, now: time.Now,
		shed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sendonce_http_shed_total",
			Help: "API requests answered 503 because the in-flight bound (SENDONCE_API_MAX_IN_FLIGHT) was reached and its queue was full or waited too long.",
		})}
	reg.MustRegister(f.shed, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sendonce_http_in_flight",
		Help: "API requests in flight under the SENDONCE_API_MAX_IN_FLIGHT bound (the event stream, health, " +
			"metrics, opt-out and sign-up pages and provider webhooks are not counted).",
	}, func() float64 { return float64(f.held()) }), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sendonce_http_max_in_flight",
		Help: "The bound on API requests in flight (SENDONCE_API_MAX_IN_FLIGHT, or the one derived from the processors).",
	}, func() float64 { return float64(f.limit) }), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sendonce_http_queued",
		Help: "API requests waiting for an in-flight slot (at most SENDONCE_API_QUEUE_MAX, each for at most SENDONCE_API_QUEUE_WAIT).",
	}, func() float64 { return float64(f.queued()) }))
	return f
}

// held is the number of slots taken.
func (f *inFlight) held() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inUse
}

// queued is the number of requests waiting for a slot.
func (f *inFlight) queued() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

// standing reports whether the queue has stood undrained past standingAfter; mu held.
func (f *inFlight) standing(now time.Time) bool {
	return len(f.queue) > 0 && now.Sub(f.emptyAt) > f.standingAfter
}

// acquire takes a slot, waiting for one in the queue when all are taken: up to
// f.wait while the queue drains, up to f.standingWait while it stands; never when
// the queue is full.
func (f *inFlight) acquire(ctx context.Context) bool {
	f.mu.Lock()
	if f.inUse < f.limit {
		f.inUse++
		f.mu.Unlock()
		return true
	}
	if f.wait <= 0 || len(f.queue) >= f.maxQueue || ctx.Err() != nil {
		f.mu.Unlock()
		return false
	}
	now := f.now()
	if len(f.queue) == 0 {
		f.emptyAt = now
	}
	timeout := f.wait
	if f.standing(now) {
		timeout = f.standingWait
	}
	w := &waiter{ready: make(chan struct{})}
	f.queue = append(f.queue, w)
	f.mu.Unlock()

	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.ready:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if w.granted { // handed a slot as the wait ended: it is this request's
		return true
	}
	for i, q := range f.queue {
		if q == w {
			f.queue = append(f.queue[:i], f.queue[i+1:]...)
			break
		}
	}
	if len(f.queue) == 0 {
		f.emptyAt = f.now()
	}
	return false
}

// release gives a slot back: to a waiting request if there is one (the oldest
// while the queue drains, the newest while it stands), else to the pool.
func (f *inFlight) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queue) == 0 {
		f.inUse--
		return
	}
	now := f.now()
	var w *waiter
	if f.standing(now) {
		w = f.queue[len(f.queue)-1]
		f.queue = f.queue[:len(f.queue)-1]
	} else {
		w = f.queue[0]
		f.queue = append(f.queue[:0], f.queue[1:]...)
	}
	if len(f.queue) == 0 {
		f.emptyAt = now
	}
	w.granted = true
	close(w.ready)
}

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
			s.inFlight.limit, shedRetryAfter)})
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
