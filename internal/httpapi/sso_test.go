package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/session"
	"github.com/sendonce/sendonce/internal/sso/ssotest"
	"github.com/sendonce/sendonce/internal/user"
)

// ssoEnv is env with a real OpenID Connect provider on loopback (let through the
// egress guard by the test's SENDONCE_EVENT_ALLOW_PRIVATE/HTTP) and account A's
// single sign-on pointed at it for example.com, new people as editors.
type ssoEnv struct {
	*env
	idp *ssotest.Provider
}

const ssoPublicURL = "https://mail.example.test"

func newSSOEnv(t *testing.T) *ssoEnv {
	t.Helper()
	idp := ssotest.New(t)
	idp.Set(func(p *ssotest.Provider) { p.Email = "grace@example.com" })
	e := setup(t, func(c *config.Config) {
		c.EventAllowPrivate, c.EventAllowHTTP, c.PublicURL = true, true, ssoPublicURL
	})
	s := &ssoEnv{env: e, idp: idp}
	res := e.do(e.keyA, http.MethodPut, "/v1/account/sso", s.settings())
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	return s
}

func (s *ssoEnv) settings() map[string]any {
	return map[string]any{"issuer_url": s.idp.Issuer, "client_id": ssotest.ClientID,
		"client_secret": ssotest.ClientSecret, "allowed_domains": []string{"Example.com"},
		"default_role": "editor", "enabled": true}
}

// flow is one browser's way through a sign-in.
type flow struct {
	cookie   string // the flow cookie /sso/start set
	auth     string // the provider's authorization URL /sso/start redirected to
	callback string // the path and query the provider sent the browser back to
}

// start begins a sign-in of email and follows the provider's redirect back.
func (s *ssoEnv) start(email string) flow {
	s.t.Helper()
	res := s.do("", http.MethodGet, "/sso/start?email="+url.QueryEscape(email), nil)
	require.Equal(s.t, http.StatusFound, res.Status, "%s", res.Body)
	var f flow
	for _, c := range res.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "sendonce_sso=") {
			f.cookie, _, _ = strings.Cut(c, ";")
			require.Contains(s.t, c, "HttpOnly")
			require.Contains(s.t, c, "SameSite=Lax")
			require.Contains(s.t, c, "Secure")
			require.Contains(s.t, c, "Path=/sso/")
		}
	}
	require.NotEmpty(s.t, f.cookie)
	auth, err := url.Parse(res.Header.Get("Location"))
	require.NoError(s.t, err)
	require.True(s.t, strings.HasPrefix(auth.String(), s.idp.Issuer+"/authorize?"), auth.String())
	q := auth.Query()
	require.Equal(s.t, "S256", q.Get("code_challenge_method"))
	require.NotEmpty(s.t, q.Get("nonce"))
	require.Equal(s.t, ssoPublicURL+"/sso/callback", q.Get("redirect_uri"))
	require.Equal(s.t, strings.TrimPrefix(f.cookie, "sendonce_sso="), q.Get("state"), "the cookie binds the state")

	f.auth = auth.String()
	return s.authorize(f)
}

// authorize has the provider sign the browser in at f's authorization URL (again,
// for a replay: a new code for the same flow) and records where it sends it back.
func (s *ssoEnv) authorize(f flow) flow {
	s.t.Helper()
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(f.auth)
	require.NoError(s.t, err)
	_ = resp.Body.Close()
	require.Equal(s.t, http.StatusFound, resp.StatusCode)
	back, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(s.t, err)
	require.Equal(s.t, ssoPublicURL+"/sso/callback", back.Scheme+"://"+back.Host+back.Path)
	f.callback = back.RequestURI()
	return f
}

// finish is the browser coming back with cookies (the flow's, and any other).
func (s *ssoEnv) finish(f flow, cookies ...string) response {
	s.t.Helper()
	var h []string
	if all := strings.Join(append([]string{f.cookie}, cookies...), "; "); strings.Trim(all, "; ") != "" {
		h = []string{"Cookie", strings.Trim(all, "; ")}
	}
	return s.do("", http.MethodGet, f.callback, nil, h...)
}

// sessionCookie is the session cookie a callback set ("" if none).
func sessionCookie(res response) string {
	for _, c := range res.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "sendonce_session=sos_") {
			v, _, _ := strings.Cut(c, ";")
			return v
		}
	}
	return ""
}

// refused checks a callback was refused with a problem and made no session.
func (s *ssoEnv) refused(res response) {
	s.t.Helper()
	require.Equal(s.t, http.StatusUnauthorized, res.Status, "%s", res.Body)
	require.Equal(s.t, "application/problem+json", res.Header.Get("Content-Type"))
	require.Empty(s.t, sessionCookie(res))
	require.NotContains(s.t, string(res.Body), "script", "nothing the provider said is repeated")
	var n int
	require.NoError(s.t, s.pool.QueryRow(context.Background(), "SELECT count(*) FROM dashboard_sessions WHERE via_sso").Scan(&n))
	require.Zero(s.t, n, "no session was made")
}

// TestSSOSignInEndToEnd: start → provider → callback signs grace in with a new
// session (the browser's earlier one ends) as an editor, the default role; the
// provider checked our PKCE verifier; a member signing in keeps their role; the
// session acts in its account only and needs no second factor of sendonce's.
func TestSSOSignInEndToEnd(t *testing.T) {
	t.Parallel()
	s := newSSOEnv(t)
	accountA := s.accountIDOf(s.keyA)
	_, err := s.pool.Exec(context.Background(), "UPDATE accounts SET require_two_factor = true WHERE id = $1", accountA)
	require.NoError(t, err)
	planted, _, _ := s.signIn(map[string]string{"api_key": s.keyA})

	res := s.finish(s.start("grace@example.com"), planted)
	require.Equal(t, http.StatusFound, res.Status, "%s", res.Body)
	require.Equal(t, "/app", res.Header.Get("Location"))
	grace := sessionCookie(res)
	require.NotEmpty(t, grace)
	require.NotEqual(t, planted, grace)
	require.Equal(t, 1, s.idp.Checked(), "the provider saw the flow's own PKCE verifier")
	require.Equal(t, http.StatusUnauthorized, s.do("", http.MethodGet, "/v1/account", nil, "Cookie", planted).Status,
		"the session held before sign-in ended")

	res = s.do("", http.MethodGet, "/v1/session", nil, "Cookie", grace)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	got := decodeAs[api.Session](t, res)
	require.Equal(t, accountA, got.AccountId)
	require.NotNil(t, got.User)
	require.Equal(t, "grace@example.com", got.User.Email)
	require.Equal(t, api.MemberRole("editor"), got.User.Role)
	require.False(t, got.User.NeedsTwoFactor, "the provider's sign-in stands for the account's second factor")
	require.True(t, got.User.ViaSso, "the dashboard learns the session is its account's only")
	require.Equal(t, http.StatusOK, s.do("", http.MethodGet, "/v1/subscribers", nil, "Cookie", grace).Status)

	members := decodeAs[api.MemberList](t, s.do(s.keyA, http.MethodGet, "/v1/members", nil))
	var found bool
	for _, m := range members.Members {
		if m.Email == "grace@example.com" {
			found = true
			require.Equal(t, api.MemberRole("editor"), m.Role)
		}
	}
	require.True(t, found, "grace is a member")

	// The session may not reach the person's other accounts or own credentials.
	csrf := got.CsrfToken
	require.Equal(t, http.StatusForbidden, s.do("", http.MethodGet, "/v1/me/accounts", nil, "Cookie", grace).Status)
	require.Equal(t, http.StatusForbidden, s.do("", http.MethodPost, "/v1/me/switch", map[string]any{"account_id": accountA},
		"Cookie", grace, "X-CSRF-Token", csrf).Status)
	require.Equal(t, http.StatusForbidden, s.do("", http.MethodPost, "/v1/me/two-factor", nil,
		"Cookie", grace, "X-CSRF-Token", csrf).Status)

	// An owner signing in through the provider stays an owner.
	ring, err := sender.ParseKeyRing([]string{sender.NewKeyRingEntry("t")})
	require.NoError(t, err)
	users := user.NewService(s.pool, session.NewService(s.pool, nil), ring, &mailbox{}, user.Options{})
	_, err = users.AddOwner(context.Background(), accountA, "ada@example.com")
	require.NoError(t, err)
	s.idp.Set(func(p *ssotest.Provider) { p.Email = "ada@example.com" })
	res = s.finish(s.start("ada@example.com"))
	require.Equal(t, http.StatusFound, res.Status, "%s", res.Body)
	got = decodeAs[api.Session](t, s.do("", http.MethodGet, "/v1/session", nil, "Cookie", sessionCookie(res)))
	require.Equal(t, api.MemberRole("owner"), got.User.Role)
}

// TestSSOStateRefused: a callback without the flow cookie, with another flow's
// cookie, or replayed after it succeeded, is refused.
func TestSSOStateRefused(t *testing.T) {
	t.Parallel()
	s := newSSOEnv(t)
	f := s.start("grace@example.com")
	s.refused(s.do("", http.MethodGet, f.callback, nil))
	other := s.start("grace@example.com")
	s.refused(s.finish(flow{cookie: other.cookie, callback: f.callback}))

	// Each refusal above spent nothing of f: it still works once, then never.
	res := s.finish(f)
	require.Equal(t, http.StatusFound, res.Status, "%s", res.Body)
	require.NotEmpty(t, sessionCookie(res))
	_, err := s.pool.Exec(context.Background(), "DELETE FROM dashboard_sessions")
	require.NoError(t, err)
	s.refused(s.finish(f))
	// Replayed with a fresh code the provider would honour (the same
	// authorization request again: same state, same PKCE challenge), the state is
	// still spent.
	s.refused(s.finish(s.authorize(f)))
}

// TestSSONonceMismatch: an ID token with another nonce than the flow's is refused.
func TestSSONonceMismatch(t *testing.T) {
	t.Parallel()
	s := newSSOEnv(t)
	s.idp.Set(func(p *ssotest.Provider) { p.Tamper = func(c *ssotest.Claims) { c.Nonce = "another-flows-nonce" } })
	s.refused(s.finish(s.start("grace@example.com")))
}

// TestSSOCodeInjectionPKCE: a code issued to one flow (one PKCE challenge) and
// brought back in another browser's flow is exchanged with that flow's verifier,
// which the provider refuses: the sign-in fails, and the provider's words are not
// repeated.
func TestSSOCodeInjectionPKCE(t *testing.T) {
	t.Parallel()
	s := newSSOEnv(t)
	victim := s.start("grace@example.com")
	attacker := s.start("grace@example.com")
	code := mustQuery(t, victim.callback).Get("code")
	q := mustQuery(t, attacker.callback)
	q.Set("code", code)
	s.refused(s.finish(flow{cookie: attacker.cookie, callback: "/sso/callback?" + q.Encode()}))
	require.Zero(t, s.idp.Checked())
}

// TestSSOTokenSignedByAnotherKey: a token under the provider's key id but signed
// by a key it never published is refused.
func TestSSOTokenSignedByAnotherKey(t *testing.T) {
	t.Parallel()
	s := newSSOEnv(t)
	other := ssotest.OtherKey(t)
	s.idp.Set(func(p *ssotest.Provider) { p.SignWith = other })
	s.refused(s.finish(s.start("grace@example.com")))
}

// TestSSOWrongAudience: a token for another client is refused.
func TestSSOWrongAudience(t *testing.T) {
	t.Parallel()
	s := newSSOEnv(t)
	s.idp.Set(func(p *ssotest.Provider) {
		p.Tamper = func(c *ssotest.Claims) { c.Audience = []string{"another-client"} }
	})
	s.refused(s.finish(s.start("grace@example.com")))
}

// TestSSOUnverifiedEmail: a provider that has not verified the address signs
// nobody in.
func TestSSOUnverifiedEmail(t *testing.T) {
	t.Parallel()
	s := newSSOEnv(t)
	s.idp.Set(func(p *ssotest.Provider) { p.EmailVerified = false })
	s.refused(s.finish(s.start("grace@example.com")))
}

// TestSSODomainNotAllowed: the provider vouching for an address of a domain the
// account does not allow signs nobody in (the address typed at the start does
// not count: the token's does).
func TestSSODomainNotAllowed(t *testing.T) {
	t.Parallel()
	s := newSSOEnv(t)
	s.idp.Set(func(p *ssotest.Provider) { p.Email = "mallory@elsewhere.org" })
	s.refused(s.finish(s.start("grace@example.com")))
	// And a domain no account signs in has no single sign-on at all.
	require.Equal(t, http.StatusNotFound, s.do("", http.MethodGet, "/sso/start?email=x@elsewhere.org", nil).Status)
}

// TestSSOSettingsOfAnotherTenant: B sees, changes and deletes none of A's
// settings; nobody ever reads the client secret back; the secret is sealed in the
// database.
func TestSSOSettingsOfAnotherTenant(t *testing.T) {
	t.Parallel()
	s := newSSOEnv(t)
	res := s.do(s.keyA, http.MethodGet, "/v1/account/sso", nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.NotContains(t, string(res.Body), ssotest.ClientSecret)
	got := decodeAs[api.SSOSettings](t, res)
	require.True(t, got.ClientSecretSet)
	require.Equal(t, []string{"example.com"}, got.AllowedDomains)
	require.Equal(t, ssoPublicURL+"/sso/callback", got.RedirectUrl)

	require.Equal(t, http.StatusNotFound, s.do(s.keyB, http.MethodGet, "/v1/account/sso", nil).Status)
	require.Equal(t, http.StatusNotFound, s.do(s.keyB, http.MethodDelete, "/v1/account/sso", nil).Status)
	require.Equal(t, http.StatusOK, s.do(s.keyA, http.MethodGet, "/v1/account/sso", nil).Status)

	var sealed []byte
	require.NoError(t, s.pool.QueryRow(context.Background(), "SELECT secret_sealed FROM account_sso").Scan(&sealed))
	require.NotContains(t, string(sealed), ssotest.ClientSecret)

	// A change without a secret keeps the stored one: sign-in still works.
	body := s.settings()
	delete(body, "client_secret")
	res = s.do(s.keyA, http.MethodPut, "/v1/account/sso", body)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.NotContains(t, string(res.Body), ssotest.ClientSecret)
	require.Equal(t, http.StatusFound, s.finish(s.start("grace@example.com")).Status)

	// B's first save needs a secret; owner is no default role.
	body["enabled"] = false
	res = s.do(s.keyB, http.MethodPut, "/v1/account/sso", body)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, decodeAs[problem](t, res).pointers(), "/client_secret")
	body["client_secret"], body["default_role"] = "x", "owner"
	res = s.do(s.keyB, http.MethodPut, "/v1/account/sso", body)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, decodeAs[problem](t, res).pointers(), "/default_role")
}

// TestSSOSeveralAccountsOneDomain: when two accounts sign one domain in, the
// start asks for the account (409) and goes to the one named by its public id.
func TestSSOSeveralAccountsOneDomain(t *testing.T) {
	t.Parallel()
	s := newSSOEnv(t)
	require.Equal(t, http.StatusOK, s.do(s.keyB, http.MethodPut, "/v1/account/sso", s.settings()).Status)
	require.Equal(t, http.StatusConflict, s.do("", http.MethodGet, "/sso/start?email=grace@example.com", nil).Status)
	b := decodeAs[api.Account](t, s.do(s.keyB, http.MethodGet, "/v1/account", nil))
	res := s.do("", http.MethodGet, "/sso/start?email=grace@example.com&account="+b.PublicId, nil)
	require.Equal(t, http.StatusFound, res.Status, "%s", res.Body)
}

// TestSSOIssuerThroughEgress: without the deployment's leave to reach private
// addresses, an issuer on loopback is refused when saved.
func TestSSOIssuerThroughEgress(t *testing.T) {
	t.Parallel()
	idp := ssotest.New(t)
	e := setup(t, func(c *config.Config) { c.EventAllowHTTP = true })
	res := e.do(e.keyA, http.MethodPut, "/v1/account/sso", map[string]any{"issuer_url": idp.Issuer,
		"client_id": ssotest.ClientID, "client_secret": ssotest.ClientSecret, "allowed_domains": []string{"example.com"},
		"default_role": "viewer", "enabled": true})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Contains(t, decodeAs[problem](t, res).pointers(), "/issuer_url")
}

func mustQuery(t *testing.T, requestURI string) url.Values {
	t.Helper()
	u, err := url.Parse(requestURI)
	require.NoError(t, err)
	return u.Query()
}
