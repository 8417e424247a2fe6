package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/account"
)

// walkRoutes is every route of the server's table, "METHOD pattern", HEAD and
// OPTIONS left out unless the table has them (chi adds neither by itself).
func (e *env) walkRoutes() []string {
	e.t.Helper()
	var out []string
	err := chi.Walk(e.handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = strings.TrimSuffix(route, "/")
		if method == http.MethodHead {
			return nil
		}
		out = append(out, method+" "+route)
		return nil
	})
	require.NoError(e.t, err)
	sort.Strings(out)
	return out
}

// tenantRoutes are the routes of the walk that authenticate as a tenant: /v1,
// but not sign-in, provider webhooks, or the event stream (which streams for as
// long as it is allowed; TestScopedKeys checks its permission).
func (e *env) tenantRoutes() []string {
	var out []string
	for _, r := range e.walkRoutes() {
		_, pattern, _ := strings.Cut(r, " ")
		if !strings.HasPrefix(pattern, "/v1/") || pattern == "/v1/session" || strings.HasPrefix(pattern, "/v1/webhooks/") ||
			pattern == "/v1/events/stream" || access.Routes[r] == access.Public {
			continue // not the permission check's: sign-in, a person's own routes
		}
		out = append(out, r)
	}
	return out
}

// TestRouteTableCoversEveryRoute: every route the router serves has a rule in
// access.Routes, and every rule names a route the router serves. A new route
// without a rule would be refused to everyone (authorize fails closed); this test
// says so before anyone finds out.
func TestRouteTableCoversEveryRoute(t *testing.T) {
	t.Parallel()
	e := setup(t)
	served := map[string]bool{}
	for _, r := range e.walkRoutes() {
		served[r] = true
		_, ok := access.Routes[r]
		assert.True(t, ok, "%s has no rule in access.Routes", r)
	}
	for r, rule := range access.Routes {
		require.True(t, served[r], "access.Routes has %s, which the router does not serve", r)
		if rule.Permission != "" {
			require.True(t, access.Valid(rule.Permission), r)
		}
		require.Equal(t, rule.Action != "", rule.Target != "", "%s: an action has a target", r)
		require.False(t, rule.Action != "" && rule.Permission.Read(), "%s: a read permission records nothing", r)
	}
}

// caller is one way of calling the API in the walk: a key's token, or a session
// cookie with its CSRF token.
type caller struct {
	name    string
	token   string
	headers []string
	perms   access.Set
}

func (e *env) as(c caller, method, path string, body any) response {
	e.t.Helper()
	return e.do(c.token, method, path, body, c.headers...)
}

// TestRoleWalk walks the whole route table (chi.Walk) for every role, for the two
// roles keys had before (full, read_only), for two custom keys (a sending key
// with messages:send only, an auditor with audit:read and campaigns:read) and for
// a dashboard session signed in with an editor key: a route the caller's
// permissions (the matrix) do not allow answers 403 problem+json of type
// permission-denied naming the route's permission, with three bodies (empty,
// broken, none), and changes nothing in the database (audit log included); a
// route they allow is never refused for a permission.
func TestRoleWalk(t *testing.T) {
	t.Parallel()
	e, _ := sessionEnv(t)
	ctx := context.Background()
	acct := decodeAs[api.Account](t, e.do(e.keyA, http.MethodGet, "/v1/account", nil))
	accounts := account.NewService(e.pool)
	mint := func(name string, spec account.KeySpec) caller {
		k, token, err := accounts.NewKey(ctx, acct.Id, name, spec)
		require.NoError(t, err)
		return caller{name: name, token: token, perms: account.KeyPermissions(k.Role, k.Permissions)}
	}
	var callers []caller
	for _, role := range append(append([]string{}, access.Roles...), access.RoleFull, access.RoleReadOnly) {
		callers = append(callers, mint(role, account.KeySpec{Role: role}))
	}
	callers = append(callers, mint("sending", account.KeySpec{Permissions: []string{"messages:send"}}),
		mint("auditor", account.KeySpec{Permissions: []string{"audit:read", "campaigns:read"}}))
	editor := mint("editor for the session", account.KeySpec{Role: access.RoleEditor})
	cookie, csrf, _ := e.signIn(map[string]string{"api_key": editor.token})
	callers = append(callers, caller{name: "editor session", headers: []string{"Cookie", cookie, "X-CSRF-Token", csrf}, perms: editor.perms})

	// Something of each kind to aim at.
	sub := decodeAs[api.Subscriber](t, e.do(e.keyA, http.MethodPost, "/v1/subscribers", map[string]any{"email": "ada@example.com", "status": "confirmed"}))
	e.do(e.keyA, http.MethodPost, "/v1/lists", map[string]any{"name": "news"})
	e.do(e.keyA, http.MethodPost, "/v1/campaigns", map[string]any{"name": "c", "from_email": "news@example.com", "subject": "Hi", "text_template": "Hello"})

	routes := e.tenantRoutes()
	require.Greater(t, len(routes), 90, "the walk found the routes")
	for _, c := range callers {
		denied := 0
		before := e.fingerprint()
		for _, route := range routes {
			rule := access.Routes[route]
			if c.perms.Has(rule.Permission) {
				continue
			}
			denied++
			method, pattern, _ := strings.Cut(route, " ")
			for _, body := range []any{map[string]any{}, "{", nil} {
				res := e.as(c, method, fill(pattern, sub.Id), body)
				require.Equal(t, http.StatusForbidden, res.Status, "%s: %s: %s", c.name, route, res.Body)
				require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
				p := decodeAs[struct {
					Type              string `json:"type"`
					MissingPermission string `json:"missing_permission"`
				}](t, res)
				require.Equal(t, "https://sendonce.dev/problems/permission-denied", p.Type, "%s: %s", c.name, route)
				require.Equal(t, string(rule.Permission), p.MissingPermission, "%s: %s", c.name, route)
			}
		}
		require.Equal(t, before, e.fingerprint(), "%s: a refused request changed nothing", c.name)
		// The allowed routes, aimed at ids nobody has (so nothing is deleted from
		// under the next caller): never refused for a permission.
		allowed := 0
		for _, route := range routes {
			if !c.perms.Has(access.Routes[route].Permission) {
				continue
			}
			allowed++
			method, pattern, _ := strings.Cut(route, " ")
			res := e.as(c, method, fill(pattern, 987654321), map[string]any{})
			require.NotContains(t, string(res.Body), "permission-denied", "%s: %s", c.name, route)
		}
		require.Equal(t, len(routes), allowed+denied)
		t.Logf("%s: %d routes allowed, %d refused", c.name, allowed, denied)
	}
}

// TestScopedKeys: a key carries a role or an explicit permission list, and
// optionally the lists it may act on; it is given only what its maker holds; the
// key API's old shape (role full or read_only) still works and reads back as it did.
func TestScopedKeys(t *testing.T) {
	t.Parallel()
	e, _ := sessionEnv(t)

	// The old shape: full by default, read_only on request, both listed as they were.
	full := decodeAs[api.APIKeyCreated](t, e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]any{"name": "old"}))
	require.Equal(t, api.APIKeyRoleFull, full.Role)
	require.Contains(t, full.Permissions, api.CampaignsApprove)
	require.NotContains(t, full.Permissions, api.OwnersManage, "full is admin: everything but owners")
	ro := decodeAs[api.APIKeyCreated](t, e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]any{"name": "ro", "role": "read_only"}))
	require.Equal(t, api.APIKeyRoleReadOnly, ro.Role)
	require.NotContains(t, ro.Permissions, api.CampaignsWrite)

	// A sending key: messages only.
	res := e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]any{"name": "sending", "permissions": []string{"messages:send"}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	sending := decodeAs[api.APIKeyCreated](t, res)
	require.Equal(t, api.APIKeyRoleCustom, sending.Role)
	require.Equal(t, []api.Permission{api.MessagesSend}, sending.Permissions)
	res = e.do(sending.Token, http.MethodGet, "/v1/subscribers", nil)
	require.Equal(t, http.StatusForbidden, res.Status)
	require.Contains(t, string(res.Body), `"missing_permission":"audience:read"`)
	res = e.do(sending.Token, http.MethodGet, "/v1/events/stream", nil)
	require.Equal(t, http.StatusForbidden, res.Status, "the stream checks the key's permission: %s", res.Body)
	require.NotEqual(t, http.StatusForbidden, e.do(sending.Token, http.MethodPost, "/v1/messages", map[string]any{}).Status)

	// Bad specs name the field.
	for body, pointer := range map[string]map[string]any{
		"/role":        {"name": "x", "role": "superuser"},
		"/permissions": {"name": "x", "role": "viewer", "permissions": []string{"audit:read"}},
	} {
		res := e.do(e.keyA, http.MethodPost, "/v1/api-keys", pointer)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
		require.Contains(t, decodeAs[problem](t, res).pointers(), body)
	}
	// No escalation: an admin (full) key cannot make an owner key, an editor no admin.
	res = e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]any{"name": "owner", "role": "owner"})
	require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
	res = e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]any{"name": "m", "permissions": []string{"keys:manage", "audit:read"}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	keyMaker := decodeAs[api.APIKeyCreated](t, res)
	res = e.do(keyMaker.Token, http.MethodPost, "/v1/api-keys", map[string]any{"name": "wider", "role": "admin"})
	require.Equal(t, http.StatusForbidden, res.Status, "a key cannot hand on more than it holds: %s", res.Body)
	require.Equal(t, http.StatusCreated, e.do(keyMaker.Token, http.MethodPost, "/v1/api-keys",
		map[string]any{"name": "narrower", "permissions": []string{"audit:read"}}).Status)

	// A list restriction: the key's lists only.
	mine := decodeAs[api.List](t, e.do(e.keyA, http.MethodPost, "/v1/lists", map[string]any{"name": "mine"}))
	other := decodeAs[api.List](t, e.do(e.keyA, http.MethodPost, "/v1/lists", map[string]any{"name": "other"}))
	res = e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]any{"name": "mine only", "role": "admin", "list_ids": []int64{mine.Id}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	scoped := decodeAs[api.APIKeyCreated](t, res)
	require.Equal(t, []int64{mine.Id}, *scoped.ListIds)
	sub := decodeAs[api.Subscriber](t, e.do(e.keyA, http.MethodPost, "/v1/subscribers", map[string]any{"email": "ada@example.com", "status": "confirmed"}))
	members := map[string]any{"subscriber_ids": []int64{sub.Id}}
	require.Equal(t, http.StatusOK, e.do(scoped.Token, http.MethodGet, fmt.Sprint("/v1/lists/", mine.Id), nil).Status)
	before := e.fingerprint()
	for _, try := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, fmt.Sprint("/v1/lists/", other.Id), nil},
		{http.MethodPost, fmt.Sprint("/v1/lists/", other.Id, "/members"), members},
		{http.MethodDelete, fmt.Sprint("/v1/lists/", other.Id), nil},
		{http.MethodPost, "/v1/lists", map[string]any{"name": "new"}},
		{http.MethodPost, "/v1/campaigns", map[string]any{"name": "c", "from_email": "a@example.com", "subject": "s", "text_template": "t", "list_ids": []int64{other.Id}}},
		{http.MethodPost, "/v1/campaigns", map[string]any{"name": "c", "from_email": "a@example.com", "subject": "s", "text_template": "t"}},
		{http.MethodPost, fmt.Sprint("/v1/subscribers/import?list_id=", other.Id), []map[string]any{{"email": "b@example.com"}}},
		{http.MethodPost, "/v1/subscribers/import", []map[string]any{{"email": "b@example.com"}}},
	} {
		res := e.do(scoped.Token, try.method, try.path, try.body)
		require.Equal(t, http.StatusForbidden, res.Status, "%s %s: %s", try.method, try.path, res.Body)
		require.Contains(t, string(res.Body), "list_restricted", "%s %s", try.method, try.path)
	}
	require.Equal(t, before, e.fingerprint(), "a list-restricted key changed nothing outside its lists")
	// A campaign of the full key aimed at the other list is not the scoped key's to approve.
	c := decodeAs[api.Campaign](t, e.do(e.keyA, http.MethodPost, "/v1/campaigns", map[string]any{"name": "c", "from_email": "a@example.com",
		"subject": "s", "text_template": "t", "list_ids": []int64{other.Id}}))
	res = e.do(scoped.Token, http.MethodPost, fmt.Sprint("/v1/campaigns/", c.Id, "/approve"), nil)
	require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
	// Its own list works.
	require.Equal(t, http.StatusOK, e.do(scoped.Token, http.MethodPost, fmt.Sprint("/v1/lists/", mine.Id, "/members"), members).Status)
	res = e.do(scoped.Token, http.MethodPost, "/v1/campaigns", map[string]any{"name": "c", "from_email": "a@example.com",
		"subject": "s", "text_template": "t", "list_ids": []int64{mine.Id}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	// A session signed in with it has its permissions and its lists.
	cookie, csrf, res := e.signIn(map[string]string{"api_key": sending.Token})
	require.Equal(t, []api.Permission{api.MessagesSend}, decodeAs[api.Session](t, res).Permissions)
	res = e.do("", http.MethodPost, "/v1/lists", map[string]any{"name": "nope"}, "Cookie", cookie, "X-CSRF-Token", csrf)
	require.Equal(t, http.StatusForbidden, res.Status)
}
