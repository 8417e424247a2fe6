package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// A POST that meets a 503 (with Retry-After) and then a 429 is sent again with the
// same Idempotency-Key and body, and the third answer is what the caller sees.
func TestRetryKeepsTheIdempotencyKey(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys, bodies, auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		b := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(b)
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		bodies = append(bodies, string(b))
		auths = append(auths, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		switch len(keys) {
		case 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"email":"a@example.com","reason":"manual","source":"","created_at":"2026-11-02T09:00:00Z"}`))
		}
	}))
	defer srv.Close()
	c, err := client.New(client.Config{URL: srv.URL, APIKey: "k"})
	require.NoError(t, err)
	resp, err := c.AddSuppressionWithResponse(context.Background(), nil, client.SuppressionCreate{Email: "a@example.com"})
	require.NoError(t, client.Check(resp, err))
	require.Len(t, keys, 3)
	require.NotEmpty(t, keys[0])
	require.Equal(t, []string{keys[0], keys[0], keys[0]}, keys)
	require.Equal(t, bodies[0], bodies[2])
	require.Equal(t, []string{"Bearer k", "Bearer k", "Bearer k"}, auths)
	require.Equal(t, "a@example.com", resp.JSON201.Email)
}

// A 4xx is the answer, not a failure to retry; after MaxRetries the last 5xx is.
func TestRetryStopsAtRefusalsAndAtTheLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status, maxRetries, attempts int
	}{
		{http.StatusUnprocessableEntity, 3, 1},
		{http.StatusConflict, 3, 1},
		{http.StatusBadGateway, 2, 3},
		{http.StatusBadGateway, -1, 1},
	} {
		var mu sync.Mutex
		n := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			mu.Unlock()
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(`{"type":"about:blank","title":"nope"}`))
		}))
		c, err := client.New(client.Config{URL: srv.URL, MaxRetries: tc.maxRetries, MaxWait: time.Millisecond})
		require.NoError(t, err)
		resp, err := c.GetAccountWithResponse(context.Background())
		err = client.Check(resp, err)
		require.Equal(t, tc.status, client.StatusCode(err), "%+v", tc)
		mu.Lock()
		require.Equal(t, tc.attempts, n, "%+v", tc)
		mu.Unlock()
		srv.Close()
	}
}

// Timeout bounds one call: a service that never answers gives the caller an error
// instead of a hung program.
func TestTimeoutBoundsACall(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, err := client.New(client.Config{URL: srv.URL, Timeout: 50 * time.Millisecond, MaxRetries: -1})
	require.NoError(t, err)
	_, err = c.GetAccountWithResponse(context.Background())
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// A POST whose answer holds a secret (a key's token) goes without an
// Idempotency-Key, which the server refuses there, and is sent once: a retry
// after a 503 could create a second key.
func TestSecretPostsCarryNoKeyAndAreSentOnce(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c, err := client.New(client.Config{URL: srv.URL, APIKey: "k"})
	require.NoError(t, err)
	_, err = c.CreateAPIKeyWithResponse(context.Background(), client.APIKeyCreate{Name: "ci"})
	require.NoError(t, err)
	require.Equal(t, []string{""}, keys)
}
