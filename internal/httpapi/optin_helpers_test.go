package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/optin"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/transactional"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// The public pages answer text/html (a string in openapi.yaml): let the response
// check read them as such.
func init() { openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder) }

// clock is the opt-in service's settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// optinEnv is the API of setup (accounts A and B) with the opt-in service on a
// settable clock, and A's public id.
type optinEnv struct {
	*env
	clock    *clock
	pubA     string
	pubB     string
	messages *render.Builder
}

const optinLinkTTL = 48 * time.Hour

func setupOptin(t *testing.T, mutate ...func(*config.Config)) *optinEnv {
	t.Helper()
	o := &optinEnv{clock: &clock{now: time.Now()}, messages: render.NewRandomBuilder()}
	keys, err := token.NewRing([]string{"k1:optin-test-secret-0123456789"})
	require.NoError(t, err)
	signer := unsubscribe.NewSigner(keys)
	o.env = setupDeps(t, func(d *httpapi.Deps) {
		d.Transactional = transactional.NewService(d.Pool, o.messages)
		d.Unsubscribe = unsubscribe.NewService(d.Pool, signer)
		d.Optin = optin.API{Service: optin.NewService(d.Pool, d.Transactional, keys, optin.Options{PublicURL: "https://mail.example.com",
			LinkTTL: optinLinkTTL, ResendEvery: time.Hour, Now: o.clock.Now})}
	}, append([]func(*config.Config){func(c *config.Config) {
		c.OptinAddrRatePerSecond, c.OptinAccountRatePerSecond = 0, 0
	}}, mutate...)...)
	o.pubA = o.publicID(o.keyA)
	o.pubB = o.publicID(o.keyB)
	return o
}

func (o *optinEnv) publicID(key string) string {
	o.t.Helper()
	res := o.do(key, "GET", "/v1/account", nil)
	require.Equal(o.t, http.StatusOK, res.Status)
	a := decodeAs[api.Account](o.t, res)
	require.Regexp(o.t, `^pub_[0-9a-f]{32}$`, a.PublicId)
	return a.PublicId
}

// list creates a list of key's account with the given settings.
func (o *optinEnv) list(key, name string, fields map[string]any) api.List {
	o.t.Helper()
	body := map[string]any{"name": name}
	for k, v := range fields {
		body[k] = v
	}
	res := o.do(key, "POST", "/v1/lists", body)
	require.Equal(o.t, http.StatusCreated, res.Status, string(res.Body))
	return decodeAs[api.List](o.t, res)
}

// doubleList is a public double opt-in list.
func (o *optinEnv) doubleList(key, name, lang string) api.List {
	return o.list(key, name, map[string]any{"optin": "double", "public": true, "language": lang,
		"optin_from_email": "news@example.com", "optin_from_name": "Example News"})
}

// form posts an HTML form sign-up from client (RemoteAddr).
func (o *optinEnv) form(publicID, client string, v url.Values) response {
	o.t.Helper()
	return o.raw("POST", "/p/"+publicID+"/subscribe", v.Encode(), client,
		"Content-Type", "application/x-www-form-urlencoded")
}

// raw sends one request without an API key from client and checks the answer
// against openapi.yaml.
func (o *optinEnv) raw(method, path, body, client string, headers ...string) response {
	o.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = client
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	o.handler.ServeHTTP(rec, req)
	res := response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	checkResponse(o.t, req, res)
	return res
}

// state is a subscriber's status and its membership of list ("" when none).
func (o *optinEnv) state(email string, list int64) (status, membership string) {
	o.t.Helper()
	_ = o.pool.QueryRow(context.Background(), `SELECT s.status, coalesce(m.status, '')
		FROM subscribers s LEFT JOIN list_members m ON m.subscriber_id = s.id AND m.list_id = $2
		WHERE s.email_lower = lower($1)`, email, list).Scan(&status, &membership)
	return status, membership
}

// confirmations counts the confirmation messages ever queued to email.
func (o *optinEnv) confirmations(email string) int {
	o.t.Helper()
	var n int
	require.NoError(o.t, o.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM messages WHERE lower(to_email) = lower($1) AND 'optin' = ANY(tags)`, email).Scan(&n))
	return n
}

func (o *optinEnv) eventCount(typ string) int {
	o.t.Helper()
	var n int
	require.NoError(o.t, o.pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE type = $1`, typ).Scan(&n))
	return n
}

// sinkExecutor runs a real executor whose provider is the HTTP provider in front
// of the deduplicating HTTP sink, until the test ends; it then checks the shared
// delivery invariant.
func (o *optinEnv) sinkExecutor(t *testing.T) *sink.HTTP {
	t.Helper()
	s := sink.NewHTTP(sink.HTTPOptions{KeepDeliveries: true})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL, Timeout: 5 * time.Second})
	require.NoError(t, err)
	ex, err := executor.New(o.pool, p, executor.Config{Workers: 4, BatchSize: 10, Tick: time.Second,
		Poll: 50 * time.Millisecond, Messages: o.messages,
		Transactional: transactional.Builder{Messages: o.messages}},
		slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	_ = ex.Start(ctx) // the executor's Start never fails
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		require.NoError(t, ex.Stop(sctx))
		delivered := map[string]int{}
		for k := range s.Deliveries() {
			delivered[k] = 1
		}
		invariant.Require(t, o.pool, invariant.Options{Delivered: delivered})
	})
	return s
}

// confirmPath finds the confirmation link in a delivered message body.
var confirmPath = regexp.MustCompile(`https://mail\.example\.com(/p/confirm/[A-Za-z0-9_-]+)`)

// waitDeliveries waits (bounded, generously: no timing assertion) until the sink
// holds n deliveries and returns them.
func waitDeliveries(t *testing.T, s *sink.HTTP, n int) map[string]sink.Delivery {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for len(s.Deliveries()) < n {
		require.True(t, time.Now().Before(deadline), "the sink holds %d deliveries, want %d", len(s.Deliveries()), n)
		time.Sleep(20 * time.Millisecond)
	}
	return s.Deliveries()
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }
