package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// shedServer is a Server with only what shed needs: a bound of limit requests in
// flight, waiting wait for a slot.
func shedServer(limit int, wait time.Duration) *Server {
	return &Server{Deps: Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		inFlight: newInFlight(limit, 64*limit, wait, prometheus.NewRegistry())}
}

// blocking is a handler that reports each request it enters on entered and holds
// it until release is closed.
func blocking(entered chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		w.WriteHeader(http.StatusNoContent)
	})
}

// Two requests held in flight by the handler fill a bound of two: the third is
// answered at once, 503 with Retry-After and a problem, and counted; once the held
// requests are answered, the next is admitted.
func TestShedBeyondTheBound(t *testing.T) {
	t.Parallel()
	s := shedServer(2, 0)
	entered, release := make(chan struct{}), make(chan struct{})
	h := requestID(s.shed(blocking(entered, release)))
	done := make(chan int, 2)
	for range 2 {
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/lists", nil))
			done <- rec.Code
		}()
		<-entered
	}
	require.Equal(t, 2, s.inFlight.held())

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/lists", nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "1", rec.Header().Get("Retry-After"))
	require.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
	var p Problem
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	require.Equal(t, problemBase+"overloaded", p.Type)
	require.Equal(t, http.StatusServiceUnavailable, p.Status)
	require.Equal(t, "/v1/lists", p.Instance)
	require.NotEmpty(t, p.RequestID)
	require.Contains(t, p.Detail, "(2)")
	require.Equal(t, 1.0, shedCount(t, s))

	close(release)
	require.Equal(t, http.StatusNoContent, <-done)
	require.Equal(t, http.StatusNoContent, <-done)
	require.Zero(t, s.inFlight.held(), "every slot is given back")

	go func() { <-entered }()
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/lists", nil))
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, 1.0, shedCount(t, s), "an admitted request is not counted as shed")
}

// A request past the bound waits for a slot (up to SENDONCE_API_QUEUE_WAIT, here
// long enough never to pass) and is admitted when one is given back.
func TestShedWaitsForASlot(t *testing.T) {
	t.Parallel()
	s := shedServer(1, time.Hour)
	entered, release := make(chan struct{}), make(chan struct{})
	h := s.shed(blocking(entered, release))
	first := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/lists", nil))
		first <- rec.Code
	}()
	<-entered
	second := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/lists", nil))
		second <- rec.Code
	}()
	// The second waits; the first, let go, gives its slot to it.
	release <- struct{}{}
	require.Equal(t, http.StatusNoContent, <-first)
	<-entered
	close(release)
	require.Equal(t, http.StatusNoContent, <-second)
	require.Zero(t, shedCount(t, s))

	// A waiting request whose client goes away is not admitted.
	// Were the request wrongly admitted, its handler's entry is taken here (it then
	// answers 204 and the test fails); otherwise this ends with the test.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-entered:
		case <-stop:
		}
	}()
	require.True(t, s.inFlight.acquire(context.Background())) // the bound is reached
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/lists", nil).WithContext(ctx))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
}

// A request reading its body holds no slot: with a bound of one, a client that
// sends its body slowly does not shut others out; when the body has arrived the
// request needs a slot again, and is shed if another holds it.
func TestShedSlowBodyHoldsNoSlot(t *testing.T) {
	t.Parallel()
	s := shedServer(1, 0)
	read := make(chan bool, 1)
	slow := s.shed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		admitted := awayFromSlot(r, func() { body, _ = io.ReadAll(r.Body) })
		require.Equal(t, "email=a@example.com", string(body))
		read <- admitted
		if !admitted {
			s.shedRequest(w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	pr, pw := io.Pipe()
	slowDone := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		slow.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/subscribers", pr))
		slowDone <- rec.Code
	}()
	_, err := pw.Write([]byte("email=")) // returns once the handler reads: it is in its body
	require.NoError(t, err)
	require.Zero(t, s.inFlight.held(), "reading the body holds no slot")

	// Another request takes the free slot and holds it while the slow body ends.
	entered, release := make(chan struct{}), make(chan struct{})
	other := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		s.shed(blocking(entered, release)).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/lists", nil))
		other <- rec.Code
	}()
	<-entered
	_, err = io.Copy(pw, strings.NewReader("a@example.com"))
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	require.False(t, <-read, "with its body read the slow request needs the slot the other holds")
	require.Equal(t, http.StatusServiceUnavailable, <-slowDone)
	close(release)
	require.Equal(t, http.StatusNoContent, <-other)
	require.Zero(t, s.inFlight.held())
	require.Equal(t, 1.0, shedCount(t, s))
}

// shedCount reads sendonce_http_shed_total.
func shedCount(t *testing.T, s *Server) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, s.inFlight.shed.Write(&m))
	return m.GetCounter().GetValue()
}

// queuedIn acquires f's slot in a goroutine and reports the outcome on the channel
// it returns, once the request is seen waiting in the queue (n waiting in all).
func queuedIn(t *testing.T, f *inFlight, n int) <-chan bool {
	t.Helper()
	got := make(chan bool, 1)
	go func() { got <- f.acquire(context.Background()) }()
	require.Eventually(t, func() bool { return f.queued() == n }, 10*time.Second, time.Millisecond)
	return got
}

// answered is f.acquire's answer, failing the test when it takes more than ten
// seconds (a request the test expects shed must not wait its hour).
func answered(t *testing.T, f *inFlight) bool {
	t.Helper()
	got := make(chan bool, 1)
	go func() { got <- f.acquire(context.Background()) }()
	select {
	case ok := <-got:
		return ok
	case <-time.After(10 * time.Second):
		t.Fatal("acquire did not answer in 10 s: it waits in the queue")
		return false
	}
}

// The queue is bounded by count: with the slot taken and the queue full, a
// request is shed at once, however long the wait allowed; the waiting ones are
// admitted as slots come back, oldest first while the queue drains.
func TestShedQueueBoundedByCount(t *testing.T) {
	t.Parallel()
	f := newInFlight(1, 2, time.Hour, prometheus.NewRegistry())
	require.True(t, f.acquire(context.Background()))
	first := queuedIn(t, f, 1)
	second := queuedIn(t, f, 2)
	require.False(t, answered(t, f), "the queue is full")
	require.Equal(t, 2, f.queued())

	f.release()
	require.True(t, <-first, "while the queue drains, the oldest is served first")
	f.release()
	require.True(t, <-second)
	f.release()
	require.Zero(t, f.held())
	require.Zero(t, f.queued())
}

// A queue that has not drained for longer than standingAfter is standing: a
// newcomer then waits at most standingWait (here 1 ms, against an hour while the
// queue drains) and slots go to the newest waiter first; once the queue has
// drained, arrival order and the long wait are back.
func TestShedStandingQueueServesNewestAndShedsFast(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	clock := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	f := newInFlight(1, 10, time.Hour, prometheus.NewRegistry())
	f.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f.standingWait = time.Millisecond

	require.True(t, f.acquire(context.Background()))
	old := queuedIn(t, f, 1)
	clock(f.standingAfter + time.Millisecond) // the queue has stood since old came
	require.False(t, answered(t, f), "in a standing queue a newcomer waits only standingWait")
	require.Equal(t, 1, f.queued())

	f.standingWait = time.Hour // from here the order is what is checked, not the wait
	newer := queuedIn(t, f, 2)
	f.release()
	require.True(t, <-newer, "a standing queue serves the newest first")
	require.Equal(t, 1, f.queued())
	f.release()
	require.True(t, <-old)
	require.Zero(t, f.queued())

	// Drained: the clock of standing starts again with the next waiter.
	a := queuedIn(t, f, 1)
	b := queuedIn(t, f, 2)
	f.release()
	require.True(t, <-a, "a queue that drained is served in arrival order again")
	f.release()
	require.True(t, <-b)
	f.release()
	require.Zero(t, f.held())
}

// A slot handed to a waiter just as its wait ends is kept, never lost: whatever
// the interleaving of timeouts and releases, every slot taken is given back once
// and the count returns to zero.
func TestShedNoSlotLostUnderChurn(t *testing.T) {
	t.Parallel()
	f := newInFlight(3, 50, 200*time.Microsecond, prometheus.NewRegistry())
	var wg sync.WaitGroup
	for range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f.acquire(context.Background()) {
				time.Sleep(50 * time.Microsecond)
				f.release()
			}
		}()
	}
	wg.Wait()
	require.Zero(t, f.held(), "every slot taken was given back")
	require.Zero(t, f.queued())
	require.True(t, f.acquire(context.Background()))
}
