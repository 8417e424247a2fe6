package httpapi

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/session"
)

const (
	// sessionCookie carries the dashboard's session token, and nothing else does.
	sessionCookie = "sendonce_session"
	// csrfHeader must carry the session's CSRF token on every request with the
	// cookie that changes something.
	csrfHeader = "X-CSRF-Token"
)

// createSession signs the dashboard in with a login token or an API key and sets
// the session cookie. The key is not kept: the browser holds only the session.
func (s *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	addr, now := s.clientAddr(r), time.Now()
	if delay := s.authFails.wait(addr, now); delay > 0 {
		s.tooManyRequests(w, r, delay, "too many failed authentications from this address; retry after %d s")
		return nil
	}
	in, err := decode[api.SessionCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	var sess session.Session
	switch {
	case in.LoginToken != nil && in.ApiKey != nil, in.LoginToken == nil && in.ApiKey == nil:
		return apperr.Invalidf("/login_token", "send exactly one of login_token and api_key")
	case in.LoginToken != nil:
		sess, err = s.Sessions.SignInWithLink(r.Context(), *in.LoginToken)
	default:
		sess, err = s.Sessions.SignInWithKey(r.Context(), *in.ApiKey)
	}
	if err != nil {
		if apperr.Is(err, apperr.Unauthorized) {
			s.authFails.fail(addr, now)
		}
		return err
	}
	s.setSessionCookie(w, sess)
	return s.writeSession(w, r, http.StatusCreated, sess)
}

// setSessionCookie hands the browser a new session's token, and nothing else.
func (s *Server) setSessionCookie(w http.ResponseWriter, sess session.Session) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sess.Token, Path: "/", Expires: sess.ExpiresAt,
		HttpOnly: true, Secure: !s.opts.Dev, SameSite: http.SameSiteStrictMode})
}

func (s *Server) writeSession(w http.ResponseWriter, r *http.Request, status int, sess session.Session) error {
	a, err := s.Accounts.Get(r.Context(), sess.AccountID)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	if sess.UserID != 0 && sess.MemberRole == "" { // a person's session just made: read it back whole
		if sess, err = s.Sessions.Get(r.Context(), sess.Token); err != nil {
			return err
		}
	}
	out := api.Session{AccountId: a.ID, AccountName: a.Name, CsrfToken: sess.CSRF(), ExpiresAt: sess.ExpiresAt,
		Role: api.APIKeyRole(sess.Role), Permissions: toAPIPermissions(sess.Permissions)}
	if sess.UserID != 0 {
		out.User = &api.SessionUser{Id: sess.UserID, Email: sess.UserEmail, Role: api.MemberRole(sess.MemberRole),
			NeedsTwoFactor: sess.NeedsTwoFactor, ViaSso: sess.ViaSSO}
	}
	return encode(w, status, out)
}

// cookieSession returns the live session of the request's cookie.
func (s *Server) cookieSession(r *http.Request) (session.Session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return session.Session{}, apperr.New(apperr.Unauthorized, "not signed in")
	}
	return s.Sessions.Get(r.Context(), c.Value)
}

// getSession answers the session of the cookie, with its CSRF token: a reloaded
// dashboard reads it here.
func (s *Server) getSession(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.cookieSession(r)
	if err != nil {
		return err
	}
	return s.writeSession(w, r, http.StatusOK, sess)
}

// deleteSession signs out: the session ends and the cookie is cleared.
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.cookieSession(r)
	if err != nil {
		return err
	}
	if !csrfOK(r, sess) {
		writeCSRFRefusal(w, r)
		return nil
	}
	if err := s.Sessions.SignOut(r.Context(), sess.Token); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: !s.opts.Dev, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// createLoginLink makes a one-time login link for the caller's account.
func (s *Server) createLoginLink(w http.ResponseWriter, r *http.Request) error {
	token, exp, err := s.Sessions.NewLoginLink(r.Context(), accountID(r))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return encode(w, http.StatusCreated, api.LoginLink{Url: session.LinkURL(s.opts.PublicURL, token), ExpiresAt: exp})
}

// authenticateSession is authenticate for a request that carries the session
// cookie and no Authorization header: the same account scoping as a key, plus the
// CSRF check on every method that changes something. SameSite=Strict already keeps
// the cookie off cross-site requests; the header is the second lock, for browsers
// or same-site neighbours that the first does not stop.
func (s *Server) authenticateSession(w http.ResponseWriter, r *http.Request, next http.Handler) {
	addr, now := s.clientAddr(r), time.Now()
	sess, err := s.cookieSession(r)
	if err != nil {
		s.authFails.fail(addr, now)
		writeError(w, r, s.Logger, err)
		return
	}
	if !safeMethod(r.Method) && !csrfOK(r, sess) {
		writeCSRFRefusal(w, r)
		return
	}
	if sess.NeedsTwoFactor && !strings.HasPrefix(r.URL.Path, "/v1/me/two-factor") {
		writeProblem(w, r, Problem{Type: problemBase + "two-factor-enrolment-required", Title: "Forbidden",
			Status: http.StatusForbidden, Detail: "this account requires a second factor: set one up first " +
				"(POST /v1/me/two-factor, then /v1/me/two-factor/confirm)"})
		return
	}
	ctx := withPrincipal(r.Context(), principalForSession(sess))
	if sess.UserID != 0 {
		ctx = withUser(ctx, requestUser{ID: sess.UserID, Email: sess.UserEmail, Role: sess.MemberRole, ViaSSO: sess.ViaSSO})
	}
	// A stream token the session mints is bound to the session and to the key it
	// was signed in with: either's end ends the token's streams.
	ctx = context.WithValue(context.WithValue(ctx, sessionIDKey{}, sess.ID), apiKeyKey{}, sess.KeyID)
	next.ServeHTTP(w, r.WithContext(ctx))
}

// principalForSession is the principal of a dashboard session: one signed in
// with a key acts as that key, with its permissions; one from a login link acts
// as itself, with full's.
func principalForSession(sess session.Session) principal {
	if sess.UserID != 0 { // a person: their membership's role as it is now
		return principalForRole(sess.AccountID, sess.MemberRole,
			access.Actor{Type: access.ActorUser, ID: sess.UserID, Label: sess.UserEmail})
	}
	actor := access.Actor{Type: access.ActorKey, ID: sess.KeyID, Label: sess.KeyName}
	if sess.KeyID == 0 {
		actor = access.Actor{Type: access.ActorSession, ID: sess.ID, Label: "login link"}
	}
	return principal{AccountID: sess.AccountID, Permissions: sess.Permissions, ListIDs: sess.ListIDs, Actor: actor}
}

type sessionIDKey struct{}

type userKey struct{}

// requestUser is the person a user session authenticates, with their role in the
// request's account.
type requestUser struct {
	ID    int64
	Email string
	Role  string
	// ViaSSO: signed in through the account's identity provider, which vouches
	// for the person in this account only.
	ViaSSO bool
}

// withUser names the signed-in person of a request (their authority is the
// principal's: principalForSession gives it their membership's role).
func withUser(ctx context.Context, u requestUser) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// userOf returns the person a user session authenticates (ok false: a key, or a
// session from a login link or a key).
func userOf(r *http.Request) (requestUser, bool) {
	u, ok := r.Context().Value(userKey{}).(requestUser)
	return u, ok
}

// sessionID returns the id of the dashboard session that authenticated the
// request (0: an API key did).
func sessionID(r *http.Request) int64 {
	id, _ := r.Context().Value(sessionIDKey{}).(int64)
	return id
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

func csrfOK(r *http.Request, sess session.Session) bool {
	got := r.Header.Get(csrfHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRF())) == 1
}

func writeCSRFRefusal(w http.ResponseWriter, r *http.Request) {
	writeProblem(w, r, Problem{Type: problemBase + "forbidden", Title: "Forbidden", Status: http.StatusForbidden,
		Detail: "a request with the session cookie that changes something needs the session's " + csrfHeader + " header"})
}
