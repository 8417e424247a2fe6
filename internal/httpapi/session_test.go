package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/session"
)

// testClock is a settable test testClock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// sessionEnv is env with the sessions on a test testClock.
func sessionEnv(t *testing.T, mutate ...func(*config.Config)) (*env, *testClock) {
	clk := &testClock{now: time.Now()}
	e := setupDeps(t, func(d *httpapi.Deps) {
		d.Sessions = session.NewService(d.Pool, d.Accounts)
		d.Sessions.Now = clk.Now
	}, mutate...)
	return e, clk
}

// loginToken asks for a login link as key and returns the token of its fragment.
func (e *env) loginToken(key string) string {
	e.t.Helper()
	res := e.do(key, http.MethodPost, "/v1/login-links", nil)
	require.Equal(e.t, http.StatusCreated, res.Status, "%s", res.Body)
	link := decodeAs[api.LoginLink](e.t, res)
	base, token, ok := strings.Cut(link.Url, "#/login/")
	require.True(e.t, ok, "the token is in the fragment: %s", link.Url)
	require.Equal(e.t, "http://127.0.0.1:8080/app", base)
	return token
}

// signIn exchanges body for a session and returns the cookie header and the CSRF token.
func (e *env) signIn(body any) (cookie, csrf string, res response) {
	e.t.Helper()
	res = e.do("", http.MethodPost, "/v1/session", body)
	if res.Status != http.StatusCreated {
		return "", "", res
	}
	setCookie := res.Header.Get("Set-Cookie")
	for _, want := range []string{"sendonce_session=sos_", "HttpOnly", "SameSite=Strict", "Path=/"} {
		require.Contains(e.t, setCookie, want)
	}
	cookie, _, _ = strings.Cut(setCookie, ";")
	return cookie, decodeAs[api.Session](e.t, res).CsrfToken, res
}

func (e *env) accountIDOf(key string) int64 {
	e.t.Helper()
	res := e.do(key, http.MethodGet, "/v1/account", nil)
	require.Equal(e.t, http.StatusOK, res.Status)
	return decodeAs[api.Account](e.t, res).Id
}

// TestLoginLinkSingleUseAndExpiry: a login link signs in once; a second use, or a
// use after 15 minutes, is a 401. The cookie is HttpOnly, SameSite=Strict and,
// outside `sendonce dev`, Secure.
func TestLoginLinkSingleUseAndExpiry(t *testing.T) {
	t.Parallel()
	e, clk := sessionEnv(t)
	token := e.loginToken(e.keyA)
	cookie, _, res := e.signIn(map[string]string{"login_token": token})
	require.NotEmpty(t, cookie)
	require.Contains(t, res.Header.Get("Set-Cookie"), "Secure")
	require.Equal(t, "account a", decodeAs[api.Session](t, res).AccountName)

	_, _, res = e.signIn(map[string]string{"login_token": token})
	require.Equal(t, http.StatusUnauthorized, res.Status, "a login link works once")

	late := e.loginToken(e.keyA)
	clk.Add(session.LinkTTL + time.Second)
	_, _, res = e.signIn(map[string]string{"login_token": late})
	require.Equal(t, http.StatusUnauthorized, res.Status, "an expired link does not sign in")

	_, _, res = e.signIn(map[string]string{"login_token": "sol_x"})
	require.Equal(t, http.StatusUnauthorized, res.Status)
	_, _, res = e.signIn(map[string]string{})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)

	// A session lasts session.TTL.
	fresh, _, _ := e.signIn(map[string]string{"api_key": e.keyA})
	require.Equal(t, http.StatusOK, e.do("", http.MethodGet, "/v1/account", nil, "Cookie", fresh).Status)
	clk.Add(session.TTL)
	require.Equal(t, http.StatusUnauthorized, e.do("", http.MethodGet, "/v1/account", nil, "Cookie", fresh).Status)
}

// TestDevSessionCookieNotSecure: `sendonce dev` serves plain http on loopback, where a
// Secure cookie would not come back.
func TestDevSessionCookieNotSecure(t *testing.T) {
	t.Parallel()
	e, _ := sessionEnv(t, func(c *config.Config) { c.Dev = true })
	_, _, res := e.signIn(map[string]string{"api_key": e.keyA})
	require.NotContains(t, res.Header.Get("Set-Cookie"), "Secure")
}

// TestSessionCookieNeedsCSRF: the session cookie authorises the /v1 API as the key
// does (same account), but a request that changes something without the session's
// X-CSRF-Token is a 403 that changes nothing; sign-out ends the session.
func TestSessionCookieNeedsCSRF(t *testing.T) {
	t.Parallel()
	e, _ := sessionEnv(t)
	cookie, csrf, _ := e.signIn(map[string]string{"login_token": e.loginToken(e.keyB)})

	res := e.do("", http.MethodGet, "/v1/account", nil, "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, "account b", decodeAs[api.Account](t, res).Name)

	keys := func() int {
		res := e.do(e.keyB, http.MethodGet, "/v1/api-keys", nil)
		require.Equal(t, http.StatusOK, res.Status)
		return len(decodeAs[api.APIKeyPage](t, res).Data)
	}
	before := keys()
	for _, header := range [][]string{nil, {"X-CSRF-Token", "nope"}, {"X-CSRF-Token", ""}} {
		res = e.do("", http.MethodPost, "/v1/api-keys", map[string]string{"name": "forged"}, append([]string{"Cookie", cookie}, header...)...)
		require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
	}
	require.Equal(t, before, keys(), "a refused request changed nothing")
	res = e.do("", http.MethodPost, "/v1/api-keys", map[string]string{"name": "mine"}, "Cookie", cookie, "X-CSRF-Token", csrf)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	require.Equal(t, before+1, keys())

	// The stream token the dashboard opens /v1/events/stream with.
	res = e.do("", http.MethodPost, "/v1/events/stream-tokens", nil, "Cookie", cookie, "X-CSRF-Token", csrf)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)

	res = e.do("", http.MethodGet, "/v1/session", nil, "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, csrf, decodeAs[api.Session](t, res).CsrfToken)

	require.Equal(t, http.StatusForbidden, e.do("", http.MethodDelete, "/v1/session", nil, "Cookie", cookie, "X-CSRF-Token", "x").Status)
	res = e.do("", http.MethodDelete, "/v1/session", nil, "Cookie", cookie, "X-CSRF-Token", csrf)
	require.Equal(t, http.StatusNoContent, res.Status)
	require.Contains(t, res.Header.Get("Set-Cookie"), "Max-Age=0")
	require.Equal(t, http.StatusUnauthorized, e.do("", http.MethodGet, "/v1/account", nil, "Cookie", cookie).Status)
}

// TestAPIKeysIsolationAndRevoke: keys are listed, made (the token once) and revoked
// per account; another account's key id answers 404 and stays usable; a revoked key
// and the sessions signed in with it stop working.
func TestAPIKeysIsolationAndRevoke(t *testing.T) {
	t.Parallel()
	e, _ := sessionEnv(t)
	// Account B makes keys first, so A's key ids are not B's ids shifted by one.
	for i := range 3 {
		require.Equal(t, http.StatusCreated, e.do(e.keyB, http.MethodPost, "/v1/api-keys", map[string]string{"name": fmt.Sprint("b", i)}).Status)
	}
	res := e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]string{"name": "ci"})
	require.Equal(t, http.StatusCreated, res.Status)
	created := decodeAs[api.APIKeyCreated](t, res)
	require.True(t, strings.HasPrefix(created.Token, created.Prefix))
	require.Equal(t, http.StatusOK, e.do(created.Token, http.MethodGet, "/v1/account", nil).Status)

	res = e.do(e.keyA, http.MethodGet, "/v1/api-keys", nil)
	page := decodeAs[api.APIKeyPage](t, res)
	require.Len(t, page.Data, 2)
	require.Equal(t, created.Id, page.Data[0].Id, "newest first")
	require.NotContains(t, string(res.Body), created.Token, "a list never shows a token")
	res = e.do(e.keyA, http.MethodGet, "/v1/api-keys?limit=1", nil)
	page = decodeAs[api.APIKeyPage](t, res)
	require.NotNil(t, page.NextCursor)
	res = e.do(e.keyA, http.MethodGet, "/v1/api-keys?limit=1&cursor="+*page.NextCursor, nil)
	require.Len(t, decodeAs[api.APIKeyPage](t, res).Data, 1)
	require.Equal(t, http.StatusUnprocessableEntity, e.do(e.keyB, http.MethodGet, "/v1/api-keys?cursor="+*page.NextCursor, nil).Status)

	res = e.do(e.keyB, http.MethodDelete, fmt.Sprint("/v1/api-keys/", created.Id), nil)
	require.Equal(t, http.StatusNotFound, res.Status, "another account's key id is a 404")
	require.Equal(t, http.StatusOK, e.do(created.Token, http.MethodGet, "/v1/account", nil).Status)

	cookie, _, _ := e.signIn(map[string]string{"api_key": created.Token})
	require.Equal(t, http.StatusOK, e.do("", http.MethodGet, "/v1/account", nil, "Cookie", cookie).Status)

	res = e.do(e.keyA, http.MethodDelete, fmt.Sprint("/v1/api-keys/", created.Id), nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.NotNil(t, decodeAs[api.APIKey](t, res).RevokedAt)
	require.Equal(t, http.StatusOK, e.do(e.keyA, http.MethodDelete, fmt.Sprint("/v1/api-keys/", created.Id), nil).Status, "revoking twice is harmless")
	require.Equal(t, http.StatusUnauthorized, e.do(created.Token, http.MethodGet, "/v1/account", nil).Status)
	require.Equal(t, http.StatusUnauthorized, e.do("", http.MethodGet, "/v1/account", nil, "Cookie", cookie).Status,
		"a session signed in with a revoked key ends")
	require.Equal(t, http.StatusUnprocessableEntity, e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]string{"name": " "}).Status)
	// No stored answer may hold a token, so no replay by Idempotency-Key.
	res = e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]string{"name": "retry"}, "Idempotency-Key", "k1")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, string(res.Body), "/Idempotency-Key")
	require.Equal(t, http.StatusUnprocessableEntity, e.do(e.keyA, http.MethodPost, "/v1/login-links", nil, "Idempotency-Key", "k1").Status)
}

// TestKeyNeverInLogOrURLOrStorage: signing in with a key or a link and using the
// session logs neither the key, nor the link token, nor the session token; the
// login link carries its token in the fragment only; the dashboard's code never
// touches localStorage or sessionStorage.
func TestKeyNeverInLogOrURLOrStorage(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var mu sync.Mutex
	e := setupDeps(t, func(d *httpapi.Deps) {
		d.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	token := e.loginToken(e.keyA)
	cookie, csrf, _ := e.signIn(map[string]string{"login_token": token})
	_, _, _ = e.signIn(map[string]string{"api_key": e.keyA})
	_, _, _ = e.signIn(map[string]string{"api_key": e.keyA + "x"})
	e.do("", http.MethodPost, "/v1/api-keys", map[string]string{"name": "x"}, "Cookie", cookie, "X-CSRF-Token", csrf)
	e.do("", http.MethodPost, "/v1/api-keys", map[string]string{"name": "x"}, "Cookie", cookie)
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	require.NotEmpty(t, out)
	for _, secret := range []string{e.keyA, token, strings.TrimPrefix(cookie, "sendonce_session="), csrf} {
		require.NotContains(t, out, secret)
	}
	files, err := filepath.Glob("../dashboard/static/*.js")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if filepath.Base(f) == "preact-htm.js" {
			continue // the vendored library
		}
		require.NotContains(t, string(b), "localStorage", f)
		require.NotContains(t, string(b), "sessionStorage", f)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestDashboardServing: the page is never cached and carries a strict CSP; assets
// are under a content hash, cached for a year, and an unknown hash is a 404;
// SENDONCE_DASHBOARD=false turns the page off.
func TestDashboardServing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do("", http.MethodGet, "/app", nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, "no-store", res.Header.Get("Cache-Control"))
	csp := res.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "script-src 'self';")
	require.Contains(t, csp, "frame-ancestors 'none'")
	require.NotContains(t, csp, "unsafe-inline")
	require.NotContains(t, csp, "unsafe-eval")
	require.NotContains(t, string(res.Body), "<script>", "no inline script")
	start := strings.Index(string(res.Body), "/app/assets/")
	require.Positive(t, start)
	asset, _, _ := strings.Cut(string(res.Body[start:]), `"`)
	require.True(t, strings.HasSuffix(asset, ".js") || strings.HasSuffix(asset, ".css"), asset)
	res = e.do("", http.MethodGet, asset, nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Contains(t, res.Header.Get("Cache-Control"), "max-age=31536000")
	require.Equal(t, http.StatusNotFound, e.do("", http.MethodGet, "/app/assets/0000000000000000/app.js", nil).Status)

	off := setup(t, func(c *config.Config) { c.DashboardOff = true })
	require.Equal(t, http.StatusNotFound, off.do("", http.MethodGet, "/app", nil).Status)
	require.Equal(t, http.StatusNotFound, off.do("", http.MethodGet, asset, nil).Status)
}

// TestDevInboxIsolation: the dev inbox shows an account its own messages only
// (transactional by account, campaign and test sends by the campaign's account);
// another account's message id is a 404; outside dev there is no inbox.
func TestDevInboxIsolation(t *testing.T) {
	t.Parallel()
	lp := provider.NewLog(slog.New(slog.NewTextHandler(io.Discard, nil)))
	e := setupDeps(t, func(d *httpapi.Deps) { d.TestSender = lp }, func(c *config.Config) { c.Dev = true })
	a, b := e.accountIDOf(e.keyA), e.accountIDOf(e.keyB)
	res := e.do(e.keyB, http.MethodPost, "/v1/campaigns", map[string]any{"name": "b", "subject": "s",
		"from_email": "b@example.com", "text_template": "hi"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	cb := decodeAs[api.Campaign](t, res).Id
	ctx := context.Background()
	for _, m := range []provider.Message{
		{JobID: fmt.Sprintf("message:%d:k1", a), To: "a@example.com", HTML: "<p>for a</p>"},
		{JobID: fmt.Sprintf("campaign:%d:9", cb), To: "b1@example.com", HTML: "<p>for b</p>"},
		{JobID: fmt.Sprintf("test:%d:1:0", cb), To: "b2@example.com"},
		{JobID: fmt.Sprintf("message:%d:k2", b), To: "b3@example.com"},
		{JobID: "campaign:999999:1", To: "nobody@example.com"},
	} {
		_, err := lp.Send(ctx, m)
		require.NoError(t, err)
	}
	inbox := func(key string) []api.DevInboxMessage {
		res := e.do(key, http.MethodGet, "/v1/dev/inbox", nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		return decodeAs[api.DevInboxPage](t, res).Data
	}
	as, bs := inbox(e.keyA), inbox(e.keyB)
	require.Len(t, as, 1)
	require.Equal(t, "a@example.com", as[0].To)
	require.Len(t, bs, 3)
	require.Equal(t, []string{"b3@example.com", "b2@example.com", "b1@example.com"}, []string{bs[0].To, bs[1].To, bs[2].To})

	res = e.do(e.keyA, http.MethodGet, fmt.Sprintf("/v1/dev/inbox/%d/html", as[0].Id), nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Contains(t, string(res.Body), "<p>for a</p>")
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "sandbox")
	require.Equal(t, http.StatusNotFound, e.do(e.keyA, http.MethodGet, fmt.Sprintf("/v1/dev/inbox/%d/html", bs[2].Id), nil).Status)

	prod := setupDeps(t, func(d *httpapi.Deps) { d.TestSender = provider.NewLog(nil) })
	require.Equal(t, http.StatusNotFound, prod.do(prod.keyA, http.MethodGet, "/v1/dev/inbox", nil).Status)
}

// The dashboard's assets are checked against openapi.yaml like every answer.
func init() {
	openapi3filter.RegisterBodyDecoder("text/css", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/javascript", openapi3filter.FileBodyDecoder)
}
