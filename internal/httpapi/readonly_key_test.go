package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// readOnlyAllowed are the routes other than GET a read-only key may call (they
// change nothing): kept here by hand, so that widening the server's list is a
// visible change to this test.
var readOnlyAllowed = map[string]bool{
	"POST /v1/events/stream-tokens":  true,
	"POST /v1/segments/preview":      true,
	"POST /v1/templates/preview":     true,
	"POST /v1/templates/lint":        true,
	"POST /v1/templates/{id}/render": true,
}

// fingerprint is a digest of every tenant table a write could touch (api_keys
// without last_used_at, which authenticating a key refreshes; not the stream
// tokens, which a read-only key may mint).
func (e *env) fingerprint() string {
	e.t.Helper()
	var parts []string
	for _, table := range []string{"accounts", "subscribers", "lists", "list_members", "segments", "suppressions",
		"templates", "campaigns", "sends", "webhook_endpoints", "event_endpoints", "senders", "events",
		"login_links", "idempotency_keys", "dashboard_sessions", "audit_log"} {
		var sum string
		err := e.pool.QueryRow(context.Background(),
			"SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') FROM "+table+" t").Scan(&sum)
		require.NoError(e.t, err, table)
		parts = append(parts, table+"="+sum)
	}
	var keys string
	require.NoError(e.t, e.pool.QueryRow(context.Background(),
		"SELECT coalesce(md5(string_agg(concat_ws('|', id, name, prefix, role, permissions, list_ids, revoked_at), ',' ORDER BY id)), '') FROM api_keys").Scan(&keys))
	return strings.Join(append(parts, "api_keys="+keys), "\n")
}

// writeRoutes walks the server's route table: every /v1 route that is not a GET
// (HEAD and OPTIONS change nothing either) and that needs an account.
func (e *env) writeRoutes() []string {
	e.t.Helper()
	var out []string
	err := chi.Walk(e.handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = strings.TrimSuffix(route, "/")
		if !strings.HasPrefix(route, "/v1/") || method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions {
			return nil
		}
		switch {
		case route == "/v1/session", strings.HasPrefix(route, "/v1/webhooks/"), strings.HasPrefix(route, "/v1/session/"),
			route == "/v1/sign-in-links", strings.HasPrefix(route, "/v1/password-resets"), route == "/v1/invitations/accept":
			return nil // no account yet (signing in), or a provider's signed delivery
		case strings.HasPrefix(route, "/v1/me/"):
			return nil // a person's own routes: any key is refused there (users_test.go)
		}
		out = append(out, method+" "+route)
		return nil
	})
	require.NoError(e.t, err)
	return out
}

// fill turns a route pattern into a path: every {id} an id of one of the
// account's resources (so nothing is refused for being missing), {email} an address.
func fill(route string, id int64) string {
	r := strings.NewReplacer("{id}", fmt.Sprint(id), "{email}", "ada@example.com", "{endpoint_id}", fmt.Sprint(id))
	return r.Replace(route)
}

// TestReadOnlyKeyRefusesEveryWrite: a read-only key may call every GET and mint a
// stream token, but every other route of the route table (walked, not listed)
// answers 403 problem+json of type permission-denied, saying so, and changes nothing
// in the database; the same requests with a full key are not refused this way. A
// session signed in with the read-only key is read-only too (even with its CSRF
// token); one from a login link is full. The role is chosen at creation, listed,
// and another account's key id is a 404.
func TestReadOnlyKeyRefusesEveryWrite(t *testing.T) {
	t.Parallel()
	e, _ := sessionEnv(t)

	// Account B's keys first, so that A's ids are not B's shifted by one.
	bKey := decodeAs[api.APIKeyCreated](t, e.do(e.keyB, http.MethodPost, "/v1/api-keys", map[string]string{"name": "b ro", "role": "read_only"}))
	res := e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]string{"name": "watcher", "role": "read_only"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	ro := decodeAs[api.APIKeyCreated](t, res)
	require.Equal(t, api.APIKeyRoleReadOnly, ro.Role)
	full := decodeAs[api.APIKeyCreated](t, e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]string{"name": "full"}))
	require.Equal(t, api.APIKeyRoleFull, full.Role, "full is the default")
	res = e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]string{"name": "x", "role": "superuser"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, string(res.Body), "/role")
	roles := map[int64]api.APIKeyRole{}
	for _, k := range decodeAs[api.APIKeyPage](t, e.do(e.keyA, http.MethodGet, "/v1/api-keys", nil)).Data {
		roles[k.Id] = k.Role
	}
	require.Equal(t, api.APIKeyRoleReadOnly, roles[ro.Id], "the list shows the role")
	require.Equal(t, api.APIKeyRoleFull, roles[full.Id])
	require.Equal(t, http.StatusNotFound, e.do(e.keyA, http.MethodDelete, fmt.Sprint("/v1/api-keys/", bKey.Id), nil).Status,
		"another account's key id is a 404")

	// Something of each kind to aim at, made with the full key.
	sub := decodeAs[api.Subscriber](t, e.do(e.keyA, http.MethodPost, "/v1/subscribers", map[string]any{"email": "ada@example.com", "status": "confirmed"}))
	e.do(e.keyA, http.MethodPost, "/v1/lists", map[string]any{"name": "news"})
	e.do(e.keyA, http.MethodPost, "/v1/templates", map[string]any{"name": "t", "subject": "Hi", "text": "Hello"})
	e.do(e.keyA, http.MethodPost, "/v1/campaigns", map[string]any{"name": "c", "from_email": "news@example.com", "subject": "Hi", "text_template": "Hello"})

	before := e.fingerprint()
	routes := e.writeRoutes()
	require.Greater(t, len(routes), 40, "the walk found the write routes")
	bodies := []any{map[string]any{}, "{", nil}
	for _, route := range routes {
		method, pattern, _ := strings.Cut(route, " ")
		path := fill(pattern, sub.Id)
		for _, body := range bodies {
			res := e.do(ro.Token, method, path, body)
			if readOnlyAllowed[route] {
				require.NotEqual(t, http.StatusForbidden, res.Status, "%s is allowed to a read-only key: %s", route, res.Body)
				continue
			}
			require.Equal(t, http.StatusForbidden, res.Status, "%s with a read-only key: %s", route, res.Body)
			require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
			p := decodeAs[problem](t, res)
			require.Equal(t, "https://sendonce.dev/problems/permission-denied", p.Type, route)
			require.Contains(t, p.Detail, "lacks the permission")
		}
	}
	require.Equal(t, before, e.fingerprint(), "a read-only key changed nothing")

	// Reads, and a stream token to watch events, work.
	for _, path := range []string{"/v1/account", "/v1/subscribers", "/v1/campaigns", "/v1/api-keys", "/v1/events"} {
		require.Equal(t, http.StatusOK, e.do(ro.Token, http.MethodGet, path, nil).Status, path)
	}
	require.Equal(t, http.StatusCreated, e.do(ro.Token, http.MethodPost, "/v1/events/stream-tokens", nil).Status)

	// A session signed in with the read-only key is read-only, CSRF token or not.
	cookie, csrf, res := e.signIn(map[string]string{"api_key": ro.Token})
	require.Equal(t, api.APIKeyRoleReadOnly, decodeAs[api.Session](t, res).Role)
	require.Equal(t, http.StatusOK, e.do("", http.MethodGet, "/v1/campaigns", nil, "Cookie", cookie).Status)
	res = e.do("", http.MethodPost, "/v1/lists", map[string]any{"name": "nope"}, "Cookie", cookie, "X-CSRF-Token", csrf)
	require.Equal(t, http.StatusForbidden, res.Status)
	require.Equal(t, "https://sendonce.dev/problems/permission-denied", decodeAs[problem](t, res).Type)
	res = e.do("", http.MethodPost, "/v1/api-keys", map[string]any{"name": "escalate"}, "Cookie", cookie, "X-CSRF-Token", csrf)
	require.Equal(t, http.StatusForbidden, res.Status, "a read-only session cannot make itself a full key")
	res = e.do("", http.MethodPost, "/v1/login-links", nil, "Cookie", cookie, "X-CSRF-Token", csrf)
	require.Equal(t, http.StatusForbidden, res.Status, "nor a login link (which signs in full)")
	res = e.do("", http.MethodGet, "/v1/session", nil, "Cookie", cookie)
	require.Equal(t, api.APIKeyRoleReadOnly, decodeAs[api.Session](t, res).Role, "a reloaded dashboard learns the role")

	// A session from a login link is full.
	cookie, csrf, res = e.signIn(map[string]string{"login_token": e.loginToken(e.keyA)})
	require.Equal(t, api.APIKeyRoleFull, decodeAs[api.Session](t, res).Role)
	require.Equal(t, http.StatusCreated, e.do("", http.MethodPost, "/v1/lists", map[string]any{"name": "by link"}, "Cookie", cookie, "X-CSRF-Token", csrf).Status)

	// The same walk with a full key is not refused for its role: the test can fail.
	for _, route := range routes {
		method, pattern, _ := strings.Cut(route, " ")
		res := e.do(full.Token, method, fill(pattern, sub.Id), map[string]any{})
		require.NotContains(t, string(res.Body), "permission-denied", route)
	}
}
