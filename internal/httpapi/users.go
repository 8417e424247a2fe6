package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/audit"
	"github.com/sendonce/sendonce/internal/logging"
	"github.com/sendonce/sendonce/internal/user"
)

// People and sign-in: the public sign-in routes (password, email link, second
// factor, password reset, invitation acceptance), the account's members, and a
// person's own accounts, sessions and second factor.

// signInGate answers 429 when the client address or the email address (known or
// not: the limit must not tell them apart) has failed too often. key is the
// email address (or another per-target key); empty skips that limit.
func (s *Server) signInGate(w http.ResponseWriter, r *http.Request, key string, now time.Time) bool {
	if d := s.authFails.wait(s.clientAddr(r), now); d > 0 {
		s.tooManyRequests(w, r, d, "too many failed authentications from this address; retry after %d s")
		return false
	}
	if key != "" {
		if d := s.signInFails.wait(key, now); d > 0 {
			s.tooManyRequests(w, r, d, "too many failed sign-ins for this email address; retry after %d s")
			return false
		}
	}
	return true
}

// signInFailed spends a token of both limits when err is a refused credential.
func (s *Server) signInFailed(r *http.Request, key string, now time.Time, err error) {
	if apperr.Is(err, apperr.Unauthorized) {
		s.authFails.fail(s.clientAddr(r), now)
		if key != "" {
			s.signInFails.fail(key, now)
		}
	}
}

func emailKey(email string) string { return "email:" + strings.ToLower(strings.TrimSpace(email)) }

// currentToken is the session token the browser sent, if any: a sign-in ends it.
func currentToken(r *http.Request) string {
	if c, err := r.Cookie(sessionCookie); err == nil {
		return c.Value
	}
	return ""
}

// answerSignIn sets the cookie of a new session (201), or answers the challenge
// of a second factor (200).
func (s *Server) answerSignIn(w http.ResponseWriter, r *http.Request, in user.SignIn) error {
	if in.Challenge != "" {
		w.Header().Set("Cache-Control", "no-store")
		return encode(w, http.StatusOK, api.SignInChallenge{Challenge: in.Challenge, ExpiresAt: time.Now().Add(user.ChallengeTTL)})
	}
	s.setSessionCookie(w, in.Session)
	return s.writeSession(w, r, http.StatusCreated, in.Session)
}

func (s *Server) signInWithPassword(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.PasswordSignIn](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	now, key := time.Now(), emailKey(in.Email)
	if !s.signInGate(w, r, key, now) {
		return nil
	}
	res, err := s.Users.SignInPassword(r.Context(), in.Email, in.Password, in.AccountId, currentToken(r))
	if err != nil {
		s.signInFailed(r, key, now, err)
		return err
	}
	return s.answerSignIn(w, r, res)
}

func (s *Server) signInWithEmailLink(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.TokenSignIn](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	now := time.Now()
	if !s.signInGate(w, r, "", now) {
		return nil
	}
	res, err := s.Users.SignInLink(r.Context(), in.Token, currentToken(r))
	if err != nil {
		s.signInFailed(r, "", now, err)
		return err
	}
	return s.answerSignIn(w, r, res)
}

func (s *Server) signInSecondFactor(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SecondFactorAnswer](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	// Guesses at one challenge are limited like those at one address.
	now, key := time.Now(), "challenge:"+in.Challenge
	if !s.signInGate(w, r, key, now) {
		return nil
	}
	res, err := s.Users.SecondFactor(r.Context(), in.Challenge, in.Code, currentToken(r))
	if err != nil {
		s.signInFailed(r, key, now, err)
		return err
	}
	return s.answerSignIn(w, r, res)
}

// mailRequest serves "mail me a link": every request spends a token of the
// address's bucket (a mailbox is not to be flooded), and the answer is 202
// whether or not the address is a person's.
func (s *Server) mailRequest(send func(*http.Request, string) error) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		in, err := decode[api.EmailRequest](w, r, s.opts.MaxBodyBytes)
		if err != nil {
			return err
		}
		now, key := time.Now(), emailKey(in.Email)
		if !s.signInGate(w, r, key, now) {
			return nil
		}
		s.signInFails.fail(key, now)
		if err := send(r, in.Email); err != nil {
			return err
		}
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
}

func (s *Server) requestSignInLink(w http.ResponseWriter, r *http.Request) error {
	return s.mailRequest(func(r *http.Request, email string) error { return s.Users.RequestLink(r.Context(), email) })(w, r)
}

func (s *Server) requestPasswordReset(w http.ResponseWriter, r *http.Request) error {
	return s.mailRequest(func(r *http.Request, email string) error { return s.Users.RequestReset(r.Context(), email) })(w, r)
}

func (s *Server) completePasswordReset(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.PasswordResetComplete](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	now := time.Now()
	if !s.signInGate(w, r, "", now) {
		return nil
	}
	if err := s.Users.Reset(r.Context(), in.Token, in.Password); err != nil {
		s.signInFailed(r, "", now, err)
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) acceptInvitation(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.InvitationAccept](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	now := time.Now()
	if !s.signInGate(w, r, "", now) {
		return nil
	}
	res, err := s.Users.Accept(r.Context(), in.Token, in.Password, currentToken(r))
	if err != nil {
		s.signInFailed(r, "", now, err)
		return err
	}
	return s.answerSignIn(w, r, res)
}

// actor is who manages members: the signed-in person, or a key (full authority
// over its account; a read-only key never gets here for a write).
func actor(r *http.Request) user.Actor {
	if u, ok := userOf(r); ok {
		return user.Actor{UserID: u.ID, Role: u.Role}
	}
	return user.Actor{Key: true}
}

func toAPIMember(m user.Member) api.Member {
	out := api.Member{UserId: m.UserID, Email: m.Email, Role: api.MemberRole(m.Role), TwoFactor: m.TwoFactor}
	if !m.CreatedAt.IsZero() {
		out.CreatedAt = &m.CreatedAt
	}
	return out
}

func toAPIInvitation(i user.Invitation) api.Invitation {
	return api.Invitation{Id: i.ID, Email: i.Email, Role: api.MemberRole(i.Role), CreatedAt: i.CreatedAt, ExpiresAt: i.ExpiresAt}
}

func (s *Server) listMembers(w http.ResponseWriter, r *http.Request) error {
	members, invs, err := s.Users.Members(r.Context(), accountID(r))
	if err != nil {
		return err
	}
	out := api.MemberList{Members: make([]api.Member, len(members)), Invitations: make([]api.Invitation, len(invs))}
	for i, m := range members {
		out.Members[i] = toAPIMember(m)
	}
	for i, inv := range invs {
		out.Invitations[i] = toAPIInvitation(inv)
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) createInvitation(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.InvitationCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	inv, err := s.Users.Invite(r.Context(), accountID(r), actor(r), in.Email, string(in.Role))
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPIInvitation(inv))
}

func (s *Server) revokeInvitation(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Users.RevokeInvitation(r.Context(), accountID(r), actor(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) updateMember(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.MemberUpdate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	m, err := s.Users.SetRole(r.Context(), accountID(r), actor(r), id, string(in.Role))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIMember(m))
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Users.Remove(r.Context(), accountID(r), actor(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) getAccountSecurity(w http.ResponseWriter, r *http.Request) error {
	on, err := s.Users.TwoFactorRequired(r.Context(), accountID(r))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.AccountSecurity{RequireTwoFactor: on})
}

func (s *Server) updateAccountSecurity(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.AccountSecurity](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	on, err := s.Users.RequireTwoFactor(r.Context(), accountID(r), actor(r), in.RequireTwoFactor)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.AccountSecurity{RequireTwoFactor: on})
}

// me returns the signed-in person; an API key (or a session not of a person)
// has no "me".
func me(r *http.Request) (requestUser, error) {
	u, ok := userOf(r)
	if !ok {
		return u, apperr.New(apperr.Forbidden, "this route is a signed-in person's own: sign in with a password or an email link")
	}
	// An account's identity provider vouches for the person in that account
	// only: its session may not reach their other accounts, sessions or second
	// factor (a provider an account's admin runs could otherwise act for a
	// person elsewhere).
	if u.ViaSSO {
		return u, apperr.New(apperr.Forbidden, "a single sign-on session acts in its account only: "+
			"sign in with your password or an email link to switch accounts or manage your own sign-in")
	}
	return u, nil
}

func (s *Server) listMyAccounts(w http.ResponseWriter, r *http.Request) error {
	u, err := me(r)
	if err != nil {
		return err
	}
	accts, err := s.Users.Accounts(r.Context(), u.ID)
	if err != nil {
		return err
	}
	out := api.UserAccountList{Data: make([]api.UserAccount, len(accts))}
	for i, a := range accts {
		out.Data[i] = api.UserAccount{Id: a.ID, Name: a.Name, Role: api.MemberRole(a.Role)}
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) switchAccount(w http.ResponseWriter, r *http.Request) error {
	u, err := me(r)
	if err != nil {
		return err
	}
	in, err := decode[api.AccountSwitch](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	sess, err := s.Users.Switch(r.Context(), u.ID, in.AccountId, currentToken(r))
	if err != nil {
		return err
	}
	s.setSessionCookie(w, sess)
	return s.writeSession(w, r, http.StatusCreated, sess)
}

func (s *Server) listMySessions(w http.ResponseWriter, r *http.Request) error {
	u, err := me(r)
	if err != nil {
		return err
	}
	list, err := s.Users.Sessions(r.Context(), u.ID, currentToken(r))
	if err != nil {
		return err
	}
	out := api.UserSessionList{Data: make([]api.UserSession, len(list))}
	for i, x := range list {
		out.Data[i] = api.UserSession{Id: x.ID, AccountId: x.AccountID, AccountName: x.AccountName,
			CreatedAt: x.CreatedAt, ExpiresAt: x.ExpiresAt, Current: x.Current}
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) endMySession(w http.ResponseWriter, r *http.Request) error {
	u, err := me(r)
	if err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Users.EndSession(r.Context(), u.ID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) startTwoFactor(w http.ResponseWriter, r *http.Request) error {
	u, err := me(r)
	if err != nil {
		return err
	}
	e, err := s.Users.StartTOTP(r.Context(), u.ID)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return encode(w, http.StatusCreated, api.TwoFactorEnrolment{Secret: e.Secret, OtpauthUrl: e.URL})
}

func (s *Server) confirmTwoFactor(w http.ResponseWriter, r *http.Request) error {
	u, err := me(r)
	if err != nil {
		return err
	}
	in, err := decode[api.TwoFactorCode](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	codes, err := s.Users.ConfirmTOTP(r.Context(), u.ID, in.Code)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return encode(w, http.StatusOK, api.RecoveryCodes{RecoveryCodes: codes})
}

func (s *Server) removeTwoFactor(w http.ResponseWriter, r *http.Request) error {
	u, err := me(r)
	if err != nil {
		return err
	}
	in, err := decode[api.TwoFactorCode](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	now, key := time.Now(), "user:"+u.Email
	if !s.signInGate(w, r, key, now) {
		return nil
	}
	if err := s.Users.RemoveTOTP(r.Context(), u.ID, in.Code); err != nil {
		s.signInFailed(r, key, now, err)
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) changeMyPassword(w http.ResponseWriter, r *http.Request) error {
	u, err := me(r)
	if err != nil {
		return err
	}
	in, err := decode[api.PasswordChange](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	// Guesses at the current password are limited as sign-ins are: a session
	// left open must not become a way to find the password.
	now, key := time.Now(), emailKey(u.Email)
	if !s.signInGate(w, r, key, now) {
		return nil
	}
	// The change is the person's own, recorded in the account they are signed in
	// to, in the transaction that sets the password (audit.Begin hooks it); a
	// refused change commits nothing and records nothing.
	ctx := r.Context()
	if p, ok := principalOf(r); ok {
		ctx, _ = audit.Begin(ctx, audit.Entry{AccountID: p.AccountID, Actor: p.Actor, Action: "user.password_change",
			TargetType: "user", TargetID: strconv.FormatInt(u.ID, 10), RequestID: logging.RequestID(ctx),
			SourceAddr: s.clientAddr(r)})
	}
	if err := s.Users.ChangePassword(ctx, u.ID, in.CurrentPassword, in.Password, currentToken(r)); err != nil {
		s.signInFailed(r, key, now, err)
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
