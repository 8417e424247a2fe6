package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/operator"
)

// operatorEnv is env with an operator key configured; it returns the key.
func operatorEnv(t *testing.T) (*env, string) {
	t.Helper()
	key, hash, err := operator.NewKey()
	require.NoError(t, err)
	e := setup(t, func(c *config.Config) { c.OperatorKeyHash = hash })
	return e, key
}

// TestOperatorKeyIsTheOnlyGate: the operator routes take the operator key and
// nothing else (no key, a tenant key, a dashboard session, a wrong operator key:
// 401), and the operator key opens no tenant route (401).
func TestOperatorKeyIsTheOnlyGate(t *testing.T) {
	t.Parallel()
	e, opKey := operatorEnv(t)
	wrong, _, err := operator.NewKey()
	require.NoError(t, err)
	for _, key := range []string{"", e.keyA, wrong, opKey + "x"} {
		res := e.do(key, http.MethodGet, "/operator/v1/accounts", nil)
		require.Equal(t, http.StatusUnauthorized, res.Status, "key %q: %s", key, res.Body)
	}
	cookie, csrf, res := e.signIn(map[string]string{"api_key": e.keyA})
	require.NotEmpty(t, cookie, "%s", res.Body)
	res = e.do("", http.MethodGet, "/operator/v1/accounts", nil, "Cookie", cookie)
	require.Equal(t, http.StatusUnauthorized, res.Status, "a dashboard session opens no operator route")
	res = e.do("", http.MethodPost, "/operator/v1/accounts/1/suspend", nil, "Cookie", cookie, "X-CSRF-Token", csrf)
	require.Equal(t, http.StatusUnauthorized, res.Status)

	for _, path := range []string{"/v1/account", "/v1/subscribers", "/v1/campaigns"} {
		res := e.do(opKey, http.MethodGet, path, nil)
		require.Equal(t, http.StatusUnauthorized, res.Status, "the operator key on %s", path)
	}
	res = e.do(opKey, http.MethodGet, "/operator/v1/accounts", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
}

// TestOperatorAPIOffWithoutHash: with no SENDONCE_OPERATOR_KEY_HASH every
// operator request is 401, whatever it carries.
func TestOperatorAPIOffWithoutHash(t *testing.T) {
	t.Parallel()
	e := setup(t)
	key, _, err := operator.NewKey()
	require.NoError(t, err)
	res := e.do(key, http.MethodGet, "/operator/v1/accounts", nil)
	require.Equal(t, http.StatusUnauthorized, res.Status)
	require.Contains(t, string(res.Body), "SENDONCE_OPERATOR_KEY_HASH")
}

// TestOperatorAccounts: create (with its first key, which works), list in pages,
// get, set quotas, suspend (the account's key and session get 403
// account-suspended; another account is untouched), resume, delete (gone at
// once: 404 to the operator, 401 to its key).
func TestOperatorAccounts(t *testing.T) {
	t.Parallel()
	e, op := operatorEnv(t)

	res := e.do(op, http.MethodPost, "/operator/v1/accounts", map[string]any{
		"name": "acme", "quotas": map[string]any{"subscribers": 10, "senders": 2, "messages_per_day": nil}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	created := decodeAs[api.OperatorAccountCreated](t, res)
	acme := created.Account
	require.Equal(t, "acme", acme.Name)
	require.Equal(t, api.OperatorAccountStatusActive, acme.Status)
	require.Equal(t, int64(10), *acme.Quotas.Subscribers)
	require.Equal(t, int64(2), *acme.Quotas.Senders)
	require.Equal(t, acme.Id, e.accountIDOf(created.ApiKey), "the first key opens the new account")

	res = e.do(op, http.MethodPost, "/operator/v1/accounts", map[string]any{"name": ""})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)

	// Three accounts (a, b, acme), two per page.
	res = e.do(op, http.MethodGet, "/operator/v1/accounts?limit=2", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	page := decodeAs[api.OperatorAccountPage](t, res)
	require.Len(t, page.Data, 2)
	require.NotNil(t, page.NextCursor)
	res = e.do(op, http.MethodGet, "/operator/v1/accounts?limit=2&cursor="+*page.NextCursor, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	page2 := decodeAs[api.OperatorAccountPage](t, res)
	require.Len(t, page2.Data, 1)
	require.Nil(t, page2.NextCursor)
	require.Equal(t, acme.Id, page2.Data[0].Id)
	res = e.do(op, http.MethodGet, "/operator/v1/accounts?cursor=bm90IGEgY3Vyc29y", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)

	res = e.do(op, http.MethodPut, "/operator/v1/accounts/"+itoa(acme.Id)+"/quotas",
		map[string]any{"subscribers": nil, "senders": 5, "messages_per_day": 100})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	got := decodeAs[api.OperatorAccount](t, res)
	require.Nil(t, got.Quotas.Subscribers)
	require.Equal(t, int64(5), *got.Quotas.Senders)
	require.Equal(t, int64(100), *got.Quotas.MessagesPerDay)
	res = e.do(op, http.MethodPut, "/operator/v1/accounts/"+itoa(acme.Id)+"/quotas",
		map[string]any{"subscribers": nil, "senders": nil, "messages_per_day": -5})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, string(res.Body), "/messages_per_day")
	res = e.do(op, http.MethodPut, "/operator/v1/accounts/"+itoa(acme.Id)+"/quotas",
		map[string]any{"subscribers": -1, "senders": nil, "messages_per_day": nil})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)

	// Suspend: the account's key and its session are refused, 403 account-suspended.
	cookie, _, res := e.signIn(map[string]string{"api_key": created.ApiKey})
	require.NotEmpty(t, cookie, "%s", res.Body)
	res = e.do(op, http.MethodPost, "/operator/v1/accounts/"+itoa(acme.Id)+"/suspend", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, api.OperatorAccountStatusSuspended, decodeAs[api.OperatorAccount](t, res).Status)
	res = e.do(created.ApiKey, http.MethodGet, "/v1/subscribers", nil)
	require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
	p := decodeAs[problem](t, res)
	require.Equal(t, "https://sendonce.dev/problems/account-suspended", p.Type)
	require.Contains(t, p.Detail, "account suspended")
	res = e.do("", http.MethodGet, "/v1/subscribers", nil, "Cookie", cookie)
	require.Equal(t, http.StatusForbidden, res.Status, "the account's dashboard session: %s", res.Body)
	res = e.do(e.keyA, http.MethodGet, "/v1/subscribers", nil)
	require.Equal(t, http.StatusOK, res.Status, "another account works on")

	res = e.do(op, http.MethodPost, "/operator/v1/accounts/"+itoa(acme.Id)+"/resume", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, api.OperatorAccountStatusActive, decodeAs[api.OperatorAccount](t, res).Status)
	res = e.do(created.ApiKey, http.MethodGet, "/v1/subscribers", nil)
	require.Equal(t, http.StatusOK, res.Status, "resumed: %s", res.Body)

	res = e.do(op, http.MethodDelete, "/operator/v1/accounts/"+itoa(acme.Id), nil)
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	res = e.do(op, http.MethodGet, "/operator/v1/accounts/"+itoa(acme.Id), nil)
	require.Equal(t, http.StatusNotFound, res.Status)
	res = e.do(op, http.MethodDelete, "/operator/v1/accounts/"+itoa(acme.Id), nil)
	require.Equal(t, http.StatusNotFound, res.Status)
	res = e.do(op, http.MethodPost, "/operator/v1/accounts/"+itoa(acme.Id)+"/resume", nil)
	require.Equal(t, http.StatusNotFound, res.Status)
	res = e.do(created.ApiKey, http.MethodGet, "/v1/account", nil)
	require.Equal(t, http.StatusUnauthorized, res.Status, "a deleted account's key is gone at once")
	res = e.do("", http.MethodGet, "/v1/account", nil, "Cookie", cookie)
	require.Equal(t, http.StatusUnauthorized, res.Status, "and its sessions")
	res = e.do(op, http.MethodGet, "/operator/v1/accounts", nil)
	require.Len(t, decodeAs[api.OperatorAccountPage](t, res).Data, 2)
}

// TestOperatorActionsAudited: every operator action on an account (create, quota
// change, suspend, resume, delete) is an entry of that account's audit log with
// the actor "operator", written in the transaction of the change, with the
// request id and what changed; the account reads them in GET /v1/audit-log. A
// refused action (a bad quota, an unknown account) records nothing. A deleted
// account's entry is written with the deletion mark and goes with the account
// when it is purged.
func TestOperatorActionsAudited(t *testing.T) {
	t.Parallel()
	e, op := operatorEnv(t)
	acct := func(rid string) api.AuditEntry {
		t.Helper()
		entries := e.auditOf(rid)
		require.Len(t, entries, 1, "request %s", rid)
		require.Equal(t, api.ActorType("operator"), entries[0].Actor.Type)
		require.Equal(t, "operator", entries[0].Actor.Label)
		require.True(t, entries[0].InChangeTx, "written in the transaction of the change")
		require.Equal(t, "account", entries[0].TargetType)
		return entries[0]
	}

	res := e.do(op, http.MethodPost, "/operator/v1/accounts", map[string]any{
		"name": "acme", "quotas": map[string]any{"subscribers": 10, "senders": 2, "messages_per_day": nil}}, "X-Request-Id", "op-create")
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	created := decodeAs[api.OperatorAccountCreated](t, res)
	id := itoa(created.Account.Id)
	require.Equal(t, "account.create", acct("op-create").Action)

	res = e.do(op, http.MethodPut, "/operator/v1/accounts/"+id+"/quotas", map[string]any{"subscribers": -1, "senders": nil, "messages_per_day": nil},
		"X-Request-Id", "op-bad-quota")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Empty(t, e.auditOf("op-bad-quota"), "a refused change records nothing")
	res = e.do(op, http.MethodPost, "/operator/v1/accounts/999999/suspend", nil, "X-Request-Id", "op-unknown")
	require.Equal(t, http.StatusNotFound, res.Status)
	require.Empty(t, e.auditOf("op-unknown"))

	for _, step := range []struct {
		rid, method, path string
		body              any
		action            string
	}{
		{"op-quotas", http.MethodPut, "/quotas", map[string]any{"subscribers": nil, "senders": 5, "messages_per_day": 9}, "account.quotas"},
		{"op-suspend", http.MethodPost, "/suspend", nil, "account.suspend"},
		{"op-resume", http.MethodPost, "/resume", nil, "account.resume"},
	} {
		res := e.do(op, step.method, "/operator/v1/accounts/"+id+step.path, step.body, "X-Request-Id", step.rid)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		require.Equal(t, step.action, acct(step.rid).Action)
	}

	// The account reads them in its own log, the operator named as actor.
	res = e.do(created.ApiKey, http.MethodGet, "/v1/audit-log?actor_type=operator", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	page := decodeAs[api.AuditEntryPage](t, res)
	var actions []string
	for _, a := range page.Data {
		actions = append(actions, a.Action)
		require.Equal(t, id, *a.TargetId)
	}
	require.Equal(t, []string{"account.resume", "account.suspend", "account.quotas", "account.create"}, actions)
	quotas := page.Data[2].Detail
	require.NotNil(t, quotas)
	require.Equal(t, map[string]any{"subscribers": nil, "senders": float64(5), "messages_per_day": float64(9)}, (*quotas)["quotas"])
	res = e.do(e.keyA, http.MethodGet, "/v1/audit-log?actor_type=operator", nil)
	require.Empty(t, decodeAs[api.AuditEntryPage](t, res).Data, "another account's log holds none of them")

	res = e.do(op, http.MethodDelete, "/operator/v1/accounts/"+id, nil, "X-Request-Id", "op-delete")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	require.Equal(t, "account.delete", acct("op-delete").Action)
}
