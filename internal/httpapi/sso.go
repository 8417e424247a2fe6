package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/session"
)

// Single sign-on: an account's OpenID Connect settings (owners and admins), and
// the two browser routes of a sign-in through the account's identity provider.

// ssoCookie binds a sign-in to the browser that started it: it holds the state
// the provider must send back, for the callback only, for as long as a flow lasts.
const ssoCookie = "sendonce_sso"

// SingleSignOn keeps accounts' single sign-on settings and runs sign-ins through
// their identity providers (sso.API).
type SingleSignOn interface {
	Get(ctx context.Context, accountID int64) (api.SSOSettings, error)
	Put(ctx context.Context, accountID int64, in api.SSOSettingsInput) (api.SSOSettings, error)
	Delete(ctx context.Context, accountID int64) error
	// Start is where the browser goes to sign the address in, and the state its
	// flow cookie binds; FlowTTL is how long the flow may take.
	Start(ctx context.Context, email, accountPublicID string) (authURL, state string, err error)
	FlowTTL() time.Duration
	// Finish completes a sign-in from the callback's query (state, code, error),
	// the flow cookie's state and the session the browser held before.
	Finish(ctx context.Context, state, code, providerError, cookieState, replacing string) (session.Session, error)
}

func (s *Server) getAccountSSO(w http.ResponseWriter, r *http.Request) error {
	set, err := s.SSO.Get(r.Context(), accountID(r))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, set)
}

func (s *Server) putAccountSSO(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SSOSettingsInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	set, err := s.SSO.Put(r.Context(), accountID(r), in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, set)
}

func (s *Server) deleteAccountSSO(w http.ResponseWriter, r *http.Request) error {
	if err := s.SSO.Delete(r.Context(), accountID(r)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ssoCookieSecure: the flow cookie is Secure whenever the browser reaches us
// over TLS (here, or at the proxy the public URL names).
func (s *Server) ssoCookieSecure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(s.opts.PublicURL, "https://")
}

// ssoStart answers GET /sso/start?email=…[&account=<public id>]: the browser goes
// to the identity provider of the account that signs the address's domain in.
func (s *Server) ssoStart(w http.ResponseWriter, r *http.Request) error {
	if !s.signInGate(w, r, "", time.Now()) {
		return nil
	}
	q := r.URL.Query()
	authURL, state, err := s.SSO.Start(r.Context(), q.Get("email"), q.Get("account"))
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: ssoCookie, Value: state, Path: "/sso/", MaxAge: int(s.SSO.FlowTTL().Seconds()),
		HttpOnly: true, Secure: s.ssoCookieSecure(r), SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, authURL, http.StatusFound)
	return nil
}

// ssoCallback answers the identity provider's redirect: on success a new
// session cookie (the browser's earlier session ends) and a redirect to the
// dashboard; otherwise a problem saying what to do, never what the provider said.
func (s *Server) ssoCallback(w http.ResponseWriter, r *http.Request) error {
	now := time.Now()
	if !s.signInGate(w, r, "", now) {
		return nil
	}
	// The flow cookie is spent whatever happens: a state works once.
	http.SetCookie(w, &http.Cookie{Name: ssoCookie, Value: "", Path: "/sso/", MaxAge: -1,
		HttpOnly: true, Secure: s.ssoCookieSecure(r), SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	q := r.URL.Query()
	cookieState := ""
	if c, err := r.Cookie(ssoCookie); err == nil {
		cookieState = c.Value
	}
	sess, err := s.SSO.Finish(r.Context(), q.Get("state"), q.Get("code"), q.Get("error"), cookieState, currentToken(r))
	if err != nil {
		s.signInFailed(r, "", now, err)
		return err
	}
	s.setSessionCookie(w, sess)
	http.Redirect(w, r, "/app", http.StatusFound)
	return nil
}
