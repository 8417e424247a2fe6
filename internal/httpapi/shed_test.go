package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/provider"
)

// holdingSender is a provider that holds each send until release is closed,
// reporting it on entered first.
type holdingSender struct {
	entered chan struct{}
	release chan struct{}
}

func (h *holdingSender) Send(ctx context.Context, m provider.Message) (string, error) {
	h.entered <- struct{}{}
	<-h.release
	return "held-" + m.To, nil
}

// holdingClock is the idempotency keys' clock: armed, the next reading reports on
// entered and waits for release, holding its request in flight (past the bound's
// gate) for as long as the test wants.
type holdingClock struct {
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (c *holdingClock) now() time.Time {
	if c.armed.CompareAndSwap(true, false) {
		c.entered <- struct{}{}
		<-c.release
	}
	return time.Now()
}

// TestShedRoutes: with the one in-flight slot held by a request, the tenant API
// and the dashboard's session are answered 503 with Retry-After and counted, while
// health, readiness, metrics, the event stream, one-click unsubscribe, sign-up and
// confirmation pages and provider webhooks are not bounded; once the request ends
// the API answers again. Routes that may take minutes (an import whose body is
// still arriving, a test send waiting for its provider) give their slot back.
func TestShedRoutes(t *testing.T) {
	t.Parallel()
	clock := &holdingClock{entered: make(chan struct{}), release: make(chan struct{})}
	sender := &holdingSender{entered: make(chan struct{}), release: make(chan struct{})}
	e := setupDeps(t, func(d *httpapi.Deps) { d.Now, d.TestSender = clock.now, sender },
		func(c *config.Config) { c.APIMaxInFlight = 1; c.APIQueueWait = 0 })
	c := createCampaign(t, e, nil)

	clock.armed.Store(true)
	held := make(chan int, 1)
	go func() {
		req := httptest.NewRequest("POST", "/v1/lists", strings.NewReader(`{"name":"held"}`))
		req.Header.Set("Authorization", "Bearer "+e.keyA)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "held-1")
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		held <- rec.Code
	}()
	<-clock.entered // the request is claiming its Idempotency-Key, holding the slot

	for _, r := range [][2]string{
		{"GET", "/v1/subscribers"}, {"POST", "/v1/subscribers"}, {"GET", "/v1/account"},
		{"GET", "/v1/campaigns/1/stats"}, {"GET", "/v1/session"}, {"POST", "/v1/session"},
	} {
		res := e.do(e.keyA, r[0], r[1], nil)
		require.Equal(t, http.StatusServiceUnavailable, res.Status, "%s %s: %s", r[0], r[1], res.Body)
		require.Equal(t, "1", res.Header.Get("Retry-After"))
		require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
		p := decodeAs[problem](t, res)
		require.Equal(t, "https://sendonce.dev/problems/overloaded", p.Type)
	}
	metrics := string(e.do("", "GET", "/metrics", nil).Body)
	require.Contains(t, metrics, "sendonce_http_shed_total 6\n")
	require.Contains(t, metrics, "sendonce_http_in_flight 1\n")
	require.Contains(t, metrics, "sendonce_http_max_in_flight 1\n")

	for _, r := range [][2]string{
		{"GET", "/healthz"}, {"GET", "/readyz"}, {"GET", "/metrics"}, {"GET", "/openapi.yaml"},
		{"GET", "/v1/events/stream"}, {"GET", "/u/garbage"}, {"POST", "/u/garbage"},
		{"POST", "/p/nosuchform/subscribe"}, {"GET", "/p/confirm/garbage"}, {"POST", "/p/confirm/garbage"},
		{"POST", "/v1/webhooks/generic/1"},
	} {
		req := httptest.NewRequest(r[0], r[1], strings.NewReader(""))
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		require.NotEqual(t, http.StatusServiceUnavailable, rec.Code, "%s %s is not bounded: %s", r[0], r[1], rec.Body)
	}

	close(clock.release)
	require.Equal(t, http.StatusCreated, <-held)
	require.Equal(t, http.StatusOK, e.do(e.keyA, "GET", "/v1/subscribers", nil).Status)

	// A test send waiting for its provider holds no slot.
	tested := make(chan int, 1)
	go func() {
		req := httptest.NewRequest("POST", "/v1/campaigns/"+itoa(c.Id)+"/test", strings.NewReader(`{"emails":["hold@example.com"]}`))
		req.Header.Set("Authorization", "Bearer "+e.keyA)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		tested <- rec.Code
	}()
	<-sender.entered
	require.Equal(t, http.StatusOK, e.do(e.keyA, "GET", "/v1/subscribers", nil).Status)
	close(sender.release)
	require.Equal(t, http.StatusOK, <-tested)

	// An import whose body is still arriving holds no slot.
	pr, pw := io.Pipe()
	imported := make(chan int, 1)
	go func() {
		req := httptest.NewRequest("POST", "/v1/subscribers/import", pr)
		req.Header.Set("Authorization", "Bearer "+e.keyA)
		req.Header.Set("Content-Type", "text/csv")
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		imported <- rec.Code
	}()
	// io.Pipe hands bytes over only when the handler reads them: past this write
	// the import is in its handler.
	_, err := pw.Write([]byte("email\n"))
	require.NoError(t, err)
	res := e.do(e.keyA, "GET", "/v1/subscribers", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	_, err = pw.Write([]byte("ada@example.com\n"))
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	require.Equal(t, http.StatusOK, <-imported)
	require.Contains(t, string(e.do("", "GET", "/metrics", nil).Body), "sendonce_http_in_flight 0\n")
}
