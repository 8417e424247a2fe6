package httpapi_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/httpapi/httpapitest"
	"github.com/sendonce/sendonce/internal/postgres"
)

func specDoc(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(sendonce.OpenAPI)
	require.NoError(t, err)
	return doc
}

// TestHeadOnEveryGetRoute: every GET of openapi.yaml answers HEAD with the GET's
// status and headers and no body (RFC 9110 §9.3.2), the unsubscribe page included
// (Mailpit's link checker reported it broken on a 405).
func TestHeadOnEveryGetRoute(t *testing.T) {
	t.Parallel()
	e := setup(t)
	f := makeFixtures(t, e)
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	doc := specDoc(t)
	checked := 0
	for _, path := range doc.Paths.InMatchingOrder() {
		if doc.Paths.Value(path).Get == nil || strings.Contains(path, "{token}") {
			continue
		}
		url := srv.URL + f.pathFor(path)
		get := httpDo(t, "GET", url, e.keyA)
		head := httpDo(t, "HEAD", url, e.keyA)
		require.Equal(t, get.StatusCode, head.StatusCode, "HEAD %s", path)
		require.Equal(t, get.Header.Get("Content-Type"), head.Header.Get("Content-Type"), "HEAD %s", path)
		body, _ := io.ReadAll(head.Body)
		require.Empty(t, body, "HEAD %s", path)
		checked++
	}
	require.Greater(t, checked, 10)

	o := setupOptout(t, "")
	get := httpDo(t, "GET", o.link(), "")
	head := httpDo(t, "HEAD", o.link(), "")
	require.Equal(t, http.StatusOK, get.StatusCode)
	require.Equal(t, http.StatusOK, head.StatusCode, "HEAD /u/{token}")
	require.Equal(t, get.Header.Get("Content-Type"), head.Header.Get("Content-Type"))
	reason, _ := o.suppressed(t)
	require.Empty(t, reason, "HEAD changes nothing")
}

func httpDo(t *testing.T, method, url, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestMethodNotAllowedCarriesAllow: every path of openapi.yaml, asked with a method
// it does not have, answers 405 with Allow listing exactly the methods it has (HEAD
// with GET).
func TestMethodNotAllowedCarriesAllow(t *testing.T) {
	t.Parallel()
	e := setup(t)
	f := makeFixtures(t, e)
	doc := specDoc(t)
	for _, path := range doc.Paths.InMatchingOrder() {
		target := f.pathFor(path)
		if strings.Contains(path, "{token}") {
			target = "/u/anything"
		}
		if strings.Contains(path, "{source}") {
			target = "/v1/webhooks/standard/1"
		}
		// What the spec routes for this URL, whichever of its paths takes it
		// (PUT /v1/subscribers/import: POST there, GET/PATCH/DELETE as /{id}).
		var allowed, refused []string
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if specHas(doc, m, target) {
				allowed = append(allowed, m)
				if m == http.MethodGet {
					allowed = append(allowed, http.MethodHead)
				}
			} else {
				refused = append(refused, m)
			}
		}
		sort.Strings(allowed)
		for _, m := range refused {
			res := send(e, m, target, nil)
			require.Equal(t, http.StatusMethodNotAllowed, res.Status, "%s %s", m, path)
			got := strings.Split(res.Header.Get("Allow"), ", ")
			sort.Strings(got)
			require.Equal(t, allowed, got, "Allow of %s", path)
			require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
		}
	}
}

// specHas reports whether some path template of doc matches url for method.
func specHas(doc *openapi3.T, method, url string) bool {
	for _, path := range doc.Paths.InMatchingOrder() {
		if doc.Paths.Value(path).GetOperation(method) == nil {
			continue
		}
		re := regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`)
		re = strings.ReplaceAll(re, `\[^/]+`, `[^/]+`)
		if regexp.MustCompile("^" + re + "$").MatchString(url) {
			return true
		}
	}
	return false
}

// TestWrongContentTypeIs415: a body in a media type the operation does not take is
// 415 with Accept (it was 422).
func TestWrongContentTypeIs415(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "", "application/xml", "nonsense"} {
		res := send(e, "POST", "/v1/lists", []byte(`{"name":"x"}`), "Content-Type", ct)
		require.Equal(t, http.StatusUnsupportedMediaType, res.Status, "%q: %s", ct, res.Body)
		require.Equal(t, "application/json", res.Header.Get("Accept"))
		requireProblem4xx(t, res, ct)
	}
	res := send(e, "POST", "/v1/lists", []byte(`{"name":"x"}`), "Content-Type", "application/json; charset=utf-8")
	require.Equal(t, http.StatusCreated, res.Status)
}

// TestIdempotencyInProgressRetryAfter: the 409 for a key whose first request is
// still running says when to retry.
func TestIdempotencyInProgressRetryAfter(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "x"}, "Idempotency-Key", "running")
	require.Equal(t, http.StatusCreated, res.Status)
	_, err := e.pool.Exec(t.Context(), `UPDATE idempotency_keys SET response_status = NULL, response_body = NULL WHERE key = 'running'`)
	require.NoError(t, err)
	res = e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "x"}, "Idempotency-Key", "running")
	require.Equal(t, http.StatusConflict, res.Status)
	require.Equal(t, "1", res.Header.Get("Retry-After"))
}

// TestRateLimitCoversAccountAndFailedAuth: GET /v1/account spends the key's bucket
// like every tenant route, and failed authentications are limited per client
// address: past the burst, even a valid key from that address waits, while another
// address is unaffected.
func TestRateLimitCoversAccountAndFailedAuth(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) {
		c.APIRatePerSecond, c.APIRateBurst = 0.001, 2
		c.AuthFailureRatePerSecond, c.AuthFailureBurst = 0.001, 3
	})
	for range 2 {
		require.Equal(t, http.StatusOK, e.do(e.keyA, "GET", "/v1/account", nil).Status)
	}
	res := send(e, "GET", "/v1/account", nil)
	require.Equal(t, http.StatusTooManyRequests, res.Status)
	require.NotEmpty(t, res.Header.Get("Retry-After"))

	from := func(addr, key string) response {
		req := httptest.NewRequest("GET", "/v1/lists", nil)
		req.RemoteAddr = addr
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		return response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	}
	bad := "so_" + strings.Repeat("a", 48)
	for _, key := range []string{bad, "", "so_é"} {
		require.Equal(t, http.StatusUnauthorized, from("203.0.113.7:4000", key).Status)
	}
	res = from("203.0.113.7:4001", bad)
	require.Equal(t, http.StatusTooManyRequests, res.Status, string(res.Body))
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	require.Equal(t, http.StatusTooManyRequests, from("203.0.113.7:4002", e.keyB).Status, "the address waits, whatever key it tries")
	require.Equal(t, http.StatusOK, from("198.51.100.1:4000", e.keyB).Status, "another address is not affected")
	// IPv6 clients are counted per /64.
	for range 3 {
		require.Equal(t, http.StatusUnauthorized, from("[2001:db8:1:2::1]:4000", bad).Status)
	}
	require.Equal(t, http.StatusTooManyRequests, from("[2001:db8:1:2::ffff]:4000", bad).Status)
	require.Equal(t, http.StatusUnauthorized, from("[2001:db8:1:3::1]:4000", bad).Status)
}

// TestSlowBodyIsCut: a client that sends its headers and half a body is answered
// 408 and disconnected at SENDONCE_READ_TIMEOUT (slowloris: 50 such connections
// were held for 150 s and more); the import has its own, longer bound.
func TestSlowBodyIsCut(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.ReadTimeout, c.ImportTimeout = 300*time.Millisecond, time.Minute })
	cfg := config.Default()
	cfg.ReadTimeout, cfg.ImportTimeout = 300*time.Millisecond, time.Minute
	srv := httpapi.HTTPServer(e.handler, httpapitest.Options(cfg))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /v1/lists HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+e.keyA+
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":")
	require.NoError(t, err)
	// A generous bound on our side only, so a regression fails instead of hanging.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the server answers the stalled body")
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	_, _ = io.Copy(io.Discard, resp.Body)
	_, err = conn.Read(make([]byte, 1))
	require.Error(t, err, "and closes the connection")
	var netErr net.Error
	require.False(t, errAs(err, &netErr) && netErr.Timeout(), "closed by the server, not by our deadline")

	// An import may take longer than the read timeout to arrive.
	conn2, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn2.Close()
	body := "email\nslow@example.com\n"
	_, err = io.WriteString(conn2, "POST /v1/subscribers/import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+e.keyA+
		"\r\nContent-Type: text/csv\r\nContent-Length: "+itoa(int64(len(body)))+"\r\n\r\n"+body[:6])
	require.NoError(t, err)
	// Past the general bound, well within the import's: a stalled ordinary body
	// opened after the import's is cut first, so once its 408 has arrived the
	// import has been stalled longer than the general bound (an event, not a sleep).
	ctl, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer ctl.Close()
	_, err = io.WriteString(ctl, "POST /v1/lists HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+e.keyA+
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":")
	require.NoError(t, err)
	require.NoError(t, ctl.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err = http.ReadResponse(bufio.NewReader(ctl), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode, "the general bound has passed")
	_, err = io.WriteString(conn2, body[6:])
	require.NoError(t, err)
	require.NoError(t, conn2.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err = http.ReadResponse(bufio.NewReader(conn2), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))

	// And the import's own bound applies to it alone: a stalled import is cut at
	// SENDONCE_IMPORT_TIMEOUT even when the general bound is long.
	e2 := setup(t, func(c *config.Config) { c.ReadTimeout, c.ImportTimeout = time.Hour, 300*time.Millisecond })
	cfg2 := config.Default()
	cfg2.ReadTimeout = time.Hour
	srv2 := httpapi.HTTPServer(e2.handler, httpapitest.Options(cfg2))
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv2.Serve(ln2) }()
	t.Cleanup(func() { _ = srv2.Close() })
	conn3, err := net.Dial("tcp", ln2.Addr().String())
	require.NoError(t, err)
	defer conn3.Close()
	_, err = io.WriteString(conn3, "POST /v1/subscribers/import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+e2.keyA+
		"\r\nContent-Type: text/csv\r\nContent-Length: 100\r\n\r\nemail\n")
	require.NoError(t, err)
	require.NoError(t, conn3.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err = http.ReadResponse(bufio.NewReader(conn3), nil)
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode, string(b))
}

func errAs(err error, target *net.Error) bool {
	ne, ok := err.(net.Error) //nolint:errorlint // a conn read error is not wrapped
	*target = ne
	return ok
}

// TestDatabaseErrorsBackstop: database errors caused by data, whatever statement
// raised them, translate to 4xx problems, never internal.
func TestDatabaseErrorsBackstop(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := t.Context()
	for _, tc := range []struct {
		sql  string
		code apperr.Code
	}{
		{`SELECT 'x'::int`, apperr.Invalid},                                                    // 22P02
		{`SELECT 1/0`, apperr.Invalid},                                                         // 22012
		{`SELECT convert_from('\xff'::bytea, 'UTF8')`, apperr.Invalid},                         // 22021
		{`SELECT '{"a":"\u0000"}'::jsonb`, apperr.Invalid},                                     // 22P05
		{`SELECT chr(0)`, apperr.Invalid},                                                      // 54000
		{`SELECT '99999999999'::int`, apperr.Invalid},                                          // 22003
		{`INSERT INTO accounts (name) VALUES (NULL)`, apperr.Invalid},                          // 23502
		{`CREATE TEMP TABLE u (x int UNIQUE); INSERT INTO u VALUES (1), (1)`, apperr.Conflict}, // 23505
	} {
		_, err := pool.Exec(ctx, tc.sql)
		require.Error(t, err, tc.sql)
		require.Equal(t, tc.code, apperr.CodeOf(postgres.Translate(err)), "%s: %v", tc.sql, err)
	}
	_, err := pool.Exec(ctx, `SELECT no_such_column FROM accounts`)
	require.Equal(t, apperr.Internal, apperr.CodeOf(postgres.Translate(err)), "our own bugs stay internal")

	// A connection the server ends under us (a restart, an administrator) is
	// unavailable, whether the driver sees 57P01 or the socket closing.
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	var pid int
	require.NoError(t, conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
	_, err = pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `SELECT 1`)
	require.Error(t, err)
	require.Equal(t, apperr.Unavailable, apperr.CodeOf(postgres.Translate(err)), "%v", err)
	require.Equal(t, apperr.Internal, apperr.CodeOf(postgres.Translate(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED})),
		"a network error that is not the driver's is not the database's")
}

// TestDatabaseDownIs503: a database that refuses connections, or a pool that is
// closed, is a 503 with Retry-After on every route (it was a 500).
func TestDatabaseDownIs503(t *testing.T) {
	t.Parallel()
	live := dbtest.New(t)
	closed, err := pgxpool.New(t.Context(), live.Config().ConnString())
	require.NoError(t, err)
	closed.Close()
	// A port nothing listens on: bind one, note it, release it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadAddr := ln.Addr().String()
	require.NoError(t, ln.Close())
	dead, err := pgxpool.New(t.Context(), "postgres://nobody@"+deadAddr+"/none?connect_timeout=5")
	require.NoError(t, err)
	t.Cleanup(dead.Close)

	for name, pool := range map[string]*pgxpool.Pool{"closed pool": closed, "refused connection": dead} {
		h := httpapitest.New(t, pool, config.Default())
		for _, path := range []string{"/v1/lists", "/v1/account", "/readyz"} {
			req := httptest.NewRequest("GET", path, nil).WithContext(context.Background())
			req.Header.Set("Authorization", "Bearer so_"+strings.Repeat("a", 48))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, http.StatusServiceUnavailable, rec.Code, "%s %s: %s", name, path, rec.Body)
			if path != "/readyz" {
				require.Equal(t, "5", rec.Header().Get("Retry-After"), "%s %s", name, path)
				require.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
			}
		}
	}
}
