package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

// TestEvery401CarriesAChallenge: RFC 9110 §15.5.2 requires WWW-Authenticate on
// every 401. Every route of the route table (walked, not listed), asked with no
// credentials and with each kind of bad one (a malformed or unknown key, another
// scheme, an unknown session cookie with or without a CSRF token, an unknown
// stream token), answers each 401 with a challenge. DELETE /v1/session once
// answered 401 without one.
func TestEvery401CarriesAChallenge(t *testing.T) {
	t.Parallel()
	e, _ := sessionEnv(t)
	credentials := []struct {
		name    string
		headers []string
		query   string
	}{
		{name: "none"},
		{name: "empty bearer", headers: []string{"Authorization", "Bearer "}},
		{name: "malformed key", headers: []string{"Authorization", "Bearer nonsense"}},
		{name: "unknown key", headers: []string{"Authorization", "Bearer " + strings.Repeat("x", len(e.keyA))}},
		{name: "basic", headers: []string{"Authorization", "Basic YTpi"}},
		{name: "unknown session", headers: []string{"Cookie", "sendonce_session=sos_" + strings.Repeat("a", 52)}},
		{name: "unknown session with csrf", headers: []string{"Cookie", "sendonce_session=sos_" + strings.Repeat("a", 52),
			"X-CSRF-Token", "x"}},
		{name: "malformed session", headers: []string{"Cookie", "sendonce_session=nonsense", "X-CSRF-Token", "x"}},
		{name: "unknown stream token", query: "?token=est_forged"},
	}
	var routes []string
	require.NoError(t, chi.Walk(e.handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes = append(routes, method+" "+strings.TrimSuffix(route, "/"))
		return nil
	}))
	require.Greater(t, len(routes), 100, "the walk found the routes")
	fill := strings.NewReplacer("{id}", "1", "{email}", "ada@example.com", "{endpoint_id}", "1", "{source}", "postmark",
		"{token}", "x", "{account_public_id}", "x", "{version}", "x", "{name}", "x")
	unauthorized := map[string]bool{}
	var bare []string
	for _, route := range routes {
		method, pattern, _ := strings.Cut(route, " ")
		for _, c := range credentials {
			var body *strings.Reader
			if method != http.MethodGet && method != http.MethodHead {
				body = strings.NewReader("{}")
			}
			req := httptest.NewRequest(method, fill.Replace(pattern)+c.query, nil)
			if body != nil {
				req = httptest.NewRequest(method, fill.Replace(pattern)+c.query, body)
				req.Header.Set("Content-Type", "application/json")
			}
			for i := 0; i+1 < len(c.headers); i += 2 {
				req.Header.Set(c.headers[i], c.headers[i+1])
			}
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusUnauthorized {
				continue
			}
			unauthorized[route] = true
			if rec.Header().Get("WWW-Authenticate") == "" {
				bare = append(bare, fmt.Sprintf("%s (%s credentials)", route, c.name))
			}
		}
	}
	require.Empty(t, bare, "401 without WWW-Authenticate")
	for _, want := range []string{"DELETE /v1/session", "GET /v1/session", "GET /v1/events/stream",
		"GET /v1/subscribers", "POST /v1/webhooks/{source}/{endpoint_id}"} {
		require.True(t, unauthorized[want], "%s answered some credentials 401", want)
	}
	require.Greater(t, len(unauthorized), 90, "the tenant routes answered 401")
}
