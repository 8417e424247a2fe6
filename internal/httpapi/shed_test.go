package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
)

// TestShedRoutes: with the one in-flight slot held by an import whose body is
// still arriving (the import streams its body, so it holds its slot meanwhile),
// the tenant API and the dashboard's session are answered 503 with Retry-After
// and counted, while health, readiness, metrics, the event stream, one-click
// unsubscribe, sign-up and confirmation pages and provider webhooks are not
// bounded; once the import ends the API answers again.
func TestShedRoutes(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.APIMaxInFlight = 1; c.APIQueueWait = 0 })

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
	// the import is in its handler, holding the slot.
	_, err := pw.Write([]byte("email\n"))
	require.NoError(t, err)

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

	_, err = pw.Write([]byte("ada@example.com\n"))
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	require.Equal(t, http.StatusOK, <-imported)
	res := e.do(e.keyA, "GET", "/v1/subscribers", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Contains(t, string(e.do("", "GET", "/metrics", nil).Body), "sendonce_http_in_flight 0\n")
}
