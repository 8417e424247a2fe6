package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestChangeMyPassword: a person changes their password with the current one;
// a wrong current password is 401 and changes nothing; the person's other
// sessions end and this one stays; the old password no longer signs in; a key,
// and a person who has no password, cannot use it.
func TestChangeMyPassword(t *testing.T) {
	t.Parallel()
	p := newPeopleEnv(t)
	ada, _ := p.owner(p.keyA, "ada@example.com")
	bob, _ := p.join(ada, "bob@example.com", "viewer", "bob's long password")
	signIn := func(password string) response {
		return p.do("", http.MethodPost, "/v1/session/password", map[string]string{"email": "bob@example.com", "password": password})
	}
	elsewhere := sessionOf(t, signIn("bob's long password"))

	wrong := p.as(bob, http.MethodPost, "/v1/me/password", map[string]string{"current_password": "not bob's password", "password": "bob's new long password"})
	require.Equal(t, http.StatusUnauthorized, wrong.Status, "%s", wrong.Body)
	require.Equal(t, http.StatusOK, p.as(elsewhere, http.MethodGet, "/v1/account", nil).Status, "a refusal ends nothing")
	short := p.as(bob, http.MethodPost, "/v1/me/password", map[string]string{"current_password": "bob's long password", "password": "short"})
	require.Equal(t, http.StatusUnprocessableEntity, short.Status)
	require.Contains(t, string(short.Body), `"/password"`)

	res := p.as(bob, http.MethodPost, "/v1/me/password", map[string]string{"current_password": "bob's long password", "password": "bob's new long password"})
	require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
	require.Equal(t, http.StatusOK, p.as(bob, http.MethodGet, "/v1/account", nil).Status, "this session stays")
	require.Equal(t, http.StatusUnauthorized, p.as(elsewhere, http.MethodGet, "/v1/account", nil).Status, "the others end")
	require.Equal(t, http.StatusUnauthorized, signIn("bob's long password").Status)
	sessionOf(t, signIn("bob's new long password"))

	// Ada signed in by email link and has no password: she sets one by a reset link.
	none := p.as(ada, http.MethodPost, "/v1/me/password", map[string]string{"current_password": "", "password": "ada's first long password"})
	require.Equal(t, http.StatusUnauthorized, none.Status)
	require.Equal(t, http.StatusForbidden, p.do(p.keyA, http.MethodPost, "/v1/me/password",
		map[string]string{"current_password": "x", "password": "a long enough password"}).Status, "a key is not a person")
}

// TestChangeMyPasswordAudited: a person's own password change is in the audit
// log of the account they are signed in to, exactly once, written in the
// transaction of the change, naming them as actor and target; a refused change
// (wrong current password, a password too short) leaves no entry.
func TestChangeMyPasswordAudited(t *testing.T) {
	t.Parallel()
	p := newPeopleEnv(t)
	ada, _ := p.owner(p.keyA, "ada@example.com")
	bob, bobID := p.join(ada, "bob@example.com", "viewer", "bob's long password")

	change := func(rid, current, next string) response {
		return p.as(bob, http.MethodPost, "/v1/me/password", map[string]string{"current_password": current, "password": next},
			"X-Request-Id", rid)
	}
	require.Equal(t, http.StatusUnauthorized, change("pw-wrong", "not bob's password", "bob's new long password").Status)
	require.Empty(t, p.auditOf("pw-wrong"), "a refused change records nothing")
	require.Equal(t, http.StatusUnprocessableEntity, change("pw-short", "bob's long password", "short").Status)
	require.Empty(t, p.auditOf("pw-short"))

	require.Equal(t, http.StatusNoContent, change("pw-ok", "bob's long password", "bob's new long password").Status)
	entries := p.auditOf("pw-ok")
	require.Len(t, entries, 1)
	require.True(t, entries[0].InChangeTx, "written in the transaction of the change")

	res := p.as(ada, http.MethodGet, "/v1/audit-log?action=user.password_change", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	page := decodeAs[api.AuditEntryPage](t, res)
	require.Len(t, page.Data, 1, "the owner sees it in the account's log")
	got := page.Data[0]
	require.Equal(t, api.ActorType("user"), got.Actor.Type)
	require.Equal(t, bobID, got.Actor.Id)
	require.Equal(t, "bob@example.com", got.Actor.Label)
	require.Equal(t, "user", got.TargetType)
	require.Equal(t, itoa(bobID), *got.TargetId)
	require.Equal(t, "pw-ok", got.RequestId)
	require.Nil(t, got.Detail, "nothing of the password is recorded")
}
