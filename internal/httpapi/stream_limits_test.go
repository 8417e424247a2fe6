package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/httpapi"
)

// streamStatus opens the stream and returns its status (closing it).
func streamStatus(t *testing.T, url string, header ...string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

// readToEnd reads the stream until the server ends it, failing after limit.
func readToEnd(t *testing.T, s *sseStream, limit time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, s.rd); done <- err }()
	select {
	case err := <-done:
		require.NoError(t, err, "the server ends the stream")
	case <-time.After(limit):
		t.Fatalf("the stream still runs after %s", limit)
	}
}

// TestEventStreamEndsWhenItsKeyIsRevoked: a stream opened with a key ends once the
// key is revoked; a stream of another key goes on.
func TestEventStreamEndsWhenItsKeyIsRevoked(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) {
		c.EventStreamPoll = 20 * time.Millisecond
		c.EventStreamRecheck = 50 * time.Millisecond
	})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	a, b := accountOf(t, e, e.keyA), accountOf(t, e, e.keyB)
	s := openStream(t, srv.URL+"/v1/events/stream", "Authorization", "Bearer "+e.keyA)
	other := openStream(t, srv.URL+"/v1/events/stream", "Authorization", "Bearer "+e.keyB)
	_, err := e.pool.Exec(context.Background(), `UPDATE api_keys SET revoked_at = now() WHERE account_id = $1`, a)
	require.NoError(t, err)
	readToEnd(t, s, 30*time.Second)
	emitN(t, e, b, 7, 7)
	require.Equal(t, 7, nOf(t, other.next(t)), "B's stream goes on")
	require.Equal(t, http.StatusUnauthorized, streamStatus(t, srv.URL+"/v1/events/stream", "Authorization", "Bearer "+e.keyA))
}

// TestEventStreamEndsWhenItsTokenExpires: a stream opened with a stream token ends
// once the token expires (on the service's clock), and the token opens no other.
func TestEventStreamEndsWhenItsTokenExpires(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := setupDeps(t, func(d *httpapi.Deps) {
		d.Events = event.NewService(d.Pool, event.Guard{})
		d.Events.Now = clock
	}, func(c *config.Config) {
		c.EventStreamPoll = 20 * time.Millisecond
		c.EventStreamRecheck = 50 * time.Millisecond
	})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	res := e.do(e.keyA, "POST", "/v1/events/stream-tokens", nil)
	require.Equal(t, http.StatusCreated, res.Status)
	tok := decodeAs[struct {
		Token string `json:"token"`
	}](t, res).Token
	s := openStream(t, srv.URL+"/v1/events/stream?token="+tok)
	emitN(t, e, accountOf(t, e, e.keyA), 1, 1)
	require.Equal(t, 1, nOf(t, s.next(t)), "the stream runs while the token is valid")
	mu.Lock()
	now = now.Add(event.StreamTokenTTL + time.Second)
	mu.Unlock()
	readToEnd(t, s, 30*time.Second)
	require.Equal(t, http.StatusUnauthorized, streamStatus(t, srv.URL+"/v1/events/stream?token="+tok))
}

// TestEventStreamBehindTheFailedAuthLimit: once an address has spent its failed
// authentications, the stream answers it 429 like every other route, whatever
// key or token it tries.
func TestEventStreamBehindTheFailedAuthLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.AuthFailureRatePerSecond = 0.001; c.AuthFailureBurst = 3 })
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	for range 3 {
		require.Equal(t, http.StatusUnauthorized, streamStatus(t, srv.URL+"/v1/account", "Authorization", "Bearer so_wrongwrongwrongwrong"))
	}
	require.Equal(t, http.StatusTooManyRequests, streamStatus(t, srv.URL+"/v1/account", "Authorization", "Bearer so_wrongwrongwrongwrong"))
	require.Equal(t, http.StatusTooManyRequests, streamStatus(t, srv.URL+"/v1/events/stream", "Authorization", "Bearer so_wrongwrongwrongwrong"))
	require.Equal(t, http.StatusTooManyRequests, streamStatus(t, srv.URL+"/v1/events/stream?token=est_random"))
}

// TestEventStreamTokenDiesWithItsKey: a stream token minted by a key that is then
// revoked opens no stream.
func TestEventStreamTokenDiesWithItsKey(t *testing.T) {
	t.Parallel()
	e := setup(t)
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	res := e.do(e.keyA, "POST", "/v1/events/stream-tokens", nil)
	require.Equal(t, http.StatusCreated, res.Status)
	tok := decodeAs[struct {
		Token string `json:"token"`
	}](t, res).Token
	_, err := e.pool.Exec(context.Background(), `UPDATE api_keys SET revoked_at = now() WHERE account_id = $1`, accountOf(t, e, e.keyA))
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, streamStatus(t, srv.URL+"/v1/events/stream?token="+tok))
}

// TestEventStreamsCappedPerKey: one key opens at most the configured streams; the
// next is 429 until one closes.
func TestEventStreamsCappedPerKey(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.EventStreamsPerKey = 2 })
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	first := openStream(t, srv.URL+"/v1/events/stream", "Authorization", "Bearer "+e.keyA)
	res := e.do(e.keyA, "POST", "/v1/events/stream-tokens", nil)
	tok := decodeAs[struct {
		Token string `json:"token"`
	}](t, res).Token
	openStream(t, srv.URL+"/v1/events/stream?token="+tok)
	require.Equal(t, http.StatusTooManyRequests, streamStatus(t, srv.URL+"/v1/events/stream", "Authorization", "Bearer "+e.keyA))
	require.Equal(t, http.StatusTooManyRequests, streamStatus(t, srv.URL+"/v1/events/stream?token="+tok),
		"a token counts against the key that minted it")
	openStream(t, srv.URL+"/v1/events/stream", "Authorization", "Bearer "+e.keyB) // another key has its own
	first.res.Body.Close()
	require.Eventually(t, func() bool {
		code := streamStatus(t, srv.URL+"/v1/events/stream", "Authorization", "Bearer "+e.keyA)
		require.Contains(t, []int{http.StatusOK, http.StatusTooManyRequests}, code)
		return code == http.StatusOK
	}, 20*time.Second, 20*time.Millisecond, "a closed stream frees its place")
}

// TestEventEndpointsCappedPerAccount: an account holds at most the configured
// endpoints; the next is 409 naming the limit, and another account is not held back.
func TestEventEndpointsCappedPerAccount(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.EventEndpointsPerAccount = 3 })
	for range 3 {
		require.Equal(t, http.StatusCreated, e.do(e.keyA, "POST", "/v1/event-endpoints", map[string]any{"url": "https://example.com/hook"}).Status)
	}
	res := e.do(e.keyA, "POST", "/v1/event-endpoints", map[string]any{"url": "https://example.com/hook"})
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
	require.Contains(t, string(res.Body), "the most it may have")
	require.Equal(t, http.StatusCreated, e.do(e.keyB, "POST", "/v1/event-endpoints", map[string]any{"url": "https://example.com/hook"}).Status)
}
