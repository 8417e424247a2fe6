package user

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/session"
	"github.com/sendonce/sendonce/internal/store"
)

// SignIn is the outcome of a right first factor: a session, or, for a user with
// a second factor, a challenge to answer with a code (Challenge) first.
type SignIn struct {
	Session   session.Session
	Challenge string
}

// Accept accepts an invitation: the user is made (or found) and becomes a member
// with the invitation's role. A password, when given, is set (the token proves
// the address as a reset link does, so the user's other sessions end); without
// one the user signs in by email link. The invitation works once, before it
// expires. The caller is then signed in (or challenged for a second factor).
func (s *Service) Accept(ctx context.Context, token string, password *string, replacing string) (SignIn, error) {
	if password != nil {
		if err := checkPassword("/password", *password); err != nil {
			return SignIn{}, err
		}
	}
	if !wellFormed(token, invitePrefix) {
		return SignIn{}, errToken
	}
	var hash string
	if password != nil {
		hash = HashPassword(*password)
	}
	now := s.opts.Now()
	var userID, accountID int64
	err := s.inTx(ctx, func(q *store.Queries) error {
		inv, err := q.InvitationAccept(ctx, store.InvitationAcceptParams{Now: &now, TokenHash: hashOf(token)})
		if notFound(err) {
			return errToken
		}
		if err != nil {
			return err
		}
		u, err := q.UserUpsert(ctx, store.UserUpsertParams{Email: inv.Email, EmailLower: inv.EmailLower})
		if err != nil {
			return err
		}
		userID, accountID = u.ID, inv.AccountID
		if _, err := q.MembershipCreate(ctx, store.MembershipCreateParams{AccountID: inv.AccountID, UserID: u.ID, Role: inv.Role}); err != nil {
			return err
		}
		if password != nil {
			if err := q.UserSetPassword(ctx, store.UserSetPasswordParams{ID: u.ID, PasswordHash: &hash}); err != nil {
				return err
			}
			if _, err := endSessions(ctx, q, store.UserSessionDeleteParams{UserID: &u.ID}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return SignIn{}, err
	}
	return s.firstFactorDone(ctx, userID, &accountID, replacing)
}

// SignInPassword checks email and password. Every failure is the same 401, and
// takes as long: an unknown address, or a user without a password, is checked
// against a dummy hash. accountID picks the account of the session (nil: the
// user's first).
func (s *Service) SignInPassword(ctx context.Context, email, password string, accountID *int64, replacing string) (SignIn, error) {
	if len(password) > MaxPasswordBytes {
		return SignIn{}, apperr.Invalidf("/password", "at most %d bytes", MaxPasswordBytes)
	}
	addr, err := parseEmail("/email", email)
	if err != nil {
		return SignIn{}, err
	}
	u, err := store.New(s.pool).UserByEmail(ctx, addr.Lower)
	if err != nil && !notFound(err) {
		return SignIn{}, err
	}
	encoded := dummyHash
	if err == nil && u.PasswordHash != nil {
		encoded = *u.PasswordHash
	}
	if !VerifyPassword(encoded, password) || err != nil || u.PasswordHash == nil {
		return SignIn{}, errSignIn
	}
	return s.firstFactorDone(ctx, u.ID, accountID, replacing)
}

// firstFactorDone answers a proven first factor: a session in the account, or a
// challenge when the user has a second factor.
func (s *Service) firstFactorDone(ctx context.Context, userID int64, accountID *int64, replacing string) (SignIn, error) {
	acct, err := s.pickAccount(ctx, userID, accountID)
	if err != nil {
		return SignIn{}, err
	}
	u, err := store.New(s.pool).UserGet(ctx, userID)
	if err != nil {
		return SignIn{}, err
	}
	if u.TotpConfirmedAt != nil {
		token, hash := newToken(challengePrefix)
		err := store.New(s.pool).UserTokenCreate(ctx, store.UserTokenCreateParams{UserID: userID, Purpose: "second_factor",
			AccountID: &acct, TokenHash: hash, ExpiresAt: s.opts.Now().Add(ChallengeTTL)})
		return SignIn{Challenge: token}, err
	}
	sess, err := s.sessions.SignInUser(ctx, userID, acct, replacing)
	return SignIn{Session: sess}, err
}

// pickAccount is the account a sign-in is for: the one asked for if the user is
// a member of it, else the user's first. A user of no account cannot sign in.
func (s *Service) pickAccount(ctx context.Context, userID int64, want *int64) (int64, error) {
	accts, err := store.New(s.pool).UserAccounts(ctx, userID)
	if err != nil {
		return 0, err
	}
	for _, a := range accts {
		if want == nil || *want == a.ID {
			return a.ID, nil
		}
	}
	if want != nil {
		return 0, apperr.New(apperr.NotFound, "no such account among yours")
	}
	return 0, errSignIn
}

// RequestLink mails a one-time sign-in link to email if it is a user's. The
// answer is the same either way (no enumeration), and the mail goes in the
// background so its timing tells nothing either.
func (s *Service) RequestLink(ctx context.Context, email string) error {
	return s.mailToken(ctx, email, "signin", linkPrefix, LinkTTL, "/app#/sign-in/",
		"Sign in to sendonce", "Open this link to sign in to sendonce. It works once, within 15 minutes; if you did not ask for it, ignore this mail.")
}

// RequestReset mails a one-time password reset link to email if it is a user's,
// with the same answer and timing either way.
func (s *Service) RequestReset(ctx context.Context, email string) error {
	return s.mailToken(ctx, email, "reset", resetPrefix, ResetTTL, "/app#/reset-password/",
		"Reset your sendonce password", "Open this link to choose a new sendonce password. It works once, within 30 minutes; if you did not ask for it, ignore this mail.")
}

func (s *Service) mailToken(ctx context.Context, email, purpose, prefix string, ttl time.Duration, path, subject, text string) error {
	addr, err := parseEmail("/email", email)
	if err != nil {
		return err
	}
	q := store.New(s.pool)
	u, err := q.UserByEmail(ctx, addr.Lower)
	if notFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	accts, err := q.UserAccounts(ctx, u.ID)
	if err != nil || len(accts) == 0 {
		return err
	}
	token, hash := newToken(prefix)
	now := s.opts.Now()
	if err := q.UserTokenCreate(ctx, store.UserTokenCreateParams{UserID: u.ID, Purpose: purpose, TokenHash: hash,
		ExpiresAt: now.Add(ttl)}); err != nil {
		return err
	}
	_, _ = q.UserTokenPurge(ctx, now.Add(-time.Hour))
	s.mailLater(ctx, s.system(accts[0].ID, purpose, u.Email, subject, text, s.opts.PublicURL+path+token))
	return nil
}

// SignInLink exchanges an email sign-in token for a session (or a challenge).
func (s *Service) SignInLink(ctx context.Context, token string, replacing string) (SignIn, error) {
	if !wellFormed(token, linkPrefix) {
		return SignIn{}, errToken
	}
	now := s.opts.Now()
	row, err := store.New(s.pool).UserTokenUse(ctx, store.UserTokenUseParams{Now: &now, TokenHash: hashOf(token), Purpose: "signin"})
	if notFound(err) {
		return SignIn{}, errToken
	}
	if err != nil {
		return SignIn{}, err
	}
	return s.firstFactorDone(ctx, row.UserID, nil, replacing)
}

// Reset sets a new password with a reset token and ends every session of the
// user: whoever knew the old password is signed out everywhere.
func (s *Service) Reset(ctx context.Context, token, password string) error {
	if err := checkPassword("/password", password); err != nil {
		return err
	}
	if !wellFormed(token, resetPrefix) {
		return errToken
	}
	hash := HashPassword(password)
	now := s.opts.Now()
	return s.inTx(ctx, func(q *store.Queries) error {
		row, err := q.UserTokenUse(ctx, store.UserTokenUseParams{Now: &now, TokenHash: hashOf(token), Purpose: "reset"})
		if notFound(err) {
			return errToken
		}
		if err != nil {
			return err
		}
		if err := q.UserSetPassword(ctx, store.UserSetPasswordParams{ID: row.UserID, PasswordHash: &hash}); err != nil {
			return err
		}
		_, err = endSessions(ctx, q, store.UserSessionDeleteParams{UserID: &row.UserID})
		return err
	})
}

// ChangePassword sets userID's password, proven with the current one: a person
// who has none (they sign in by email link) sets one through a reset link. A
// wrong current password is 401, as a sign-in's. Every other session of the
// person ends; keep, the session token in use, stays.
func (s *Service) ChangePassword(ctx context.Context, userID int64, current, next, keep string) error {
	if len(current) > MaxPasswordBytes {
		return apperr.Invalidf("/current_password", "at most %d bytes", MaxPasswordBytes)
	}
	if err := checkPassword("/password", next); err != nil {
		return err
	}
	u, err := store.New(s.pool).UserGet(ctx, userID)
	if err != nil {
		return err
	}
	encoded := dummyHash
	if u.PasswordHash != nil {
		encoded = *u.PasswordHash
	}
	if !VerifyPassword(encoded, current) || u.PasswordHash == nil {
		return errCurrentPassword
	}
	hash := HashPassword(next)
	return s.inTx(ctx, func(q *store.Queries) error {
		if err := q.UserSetPassword(ctx, store.UserSetPasswordParams{ID: userID, PasswordHash: &hash}); err != nil {
			return err
		}
		_, err := endSessions(ctx, q, store.UserSessionDeleteParams{UserID: &userID, KeepTokenHash: session.HashOf(keep)})
		return err
	})
}

// Account is one of a user's accounts.
type Account struct {
	ID   int64
	Name string
	Role string
}

// Accounts lists the accounts userID is a member of.
func (s *Service) Accounts(ctx context.Context, userID int64) ([]Account, error) {
	rows, err := store.New(s.pool).UserAccounts(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]Account, len(rows))
	for i, r := range rows {
		out[i] = Account{ID: r.ID, Name: r.Name, Role: r.Role}
	}
	return out, nil
}

// Switch moves the user to another of their accounts: a new session (a new id)
// replaces the current one, which ends.
func (s *Service) Switch(ctx context.Context, userID, accountID int64, current string) (session.Session, error) {
	acct, err := s.pickAccount(ctx, userID, &accountID)
	if err != nil {
		return session.Session{}, err
	}
	return s.sessions.SignInUser(ctx, userID, acct, current)
}

// SessionInfo is one of a user's live sessions.
type SessionInfo struct {
	ID          int64
	AccountID   int64
	AccountName string
	CreatedAt   time.Time
	ExpiresAt   time.Time
	Current     bool
}

// Sessions lists the user's live sessions; current is the token in use.
func (s *Service) Sessions(ctx context.Context, userID int64, current string) ([]SessionInfo, error) {
	now := s.opts.Now()
	rows, err := store.New(s.pool).UserSessionList(ctx, store.UserSessionListParams{UserID: &userID, Now: &now})
	if err != nil {
		return nil, err
	}
	cur := session.HashOf(current)
	out := make([]SessionInfo, len(rows))
	for i, r := range rows {
		out[i] = SessionInfo{ID: r.ID, AccountID: r.AccountID, AccountName: r.AccountName, CreatedAt: r.CreatedAt,
			ExpiresAt: r.ExpiresAt, Current: string(r.TokenHash) == string(cur)}
	}
	return out, nil
}

// EndSession ends one of the user's sessions; another user's id is not found.
func (s *Service) EndSession(ctx context.Context, userID, id int64) error {
	n, err := endSessions(ctx, store.New(s.pool), store.UserSessionDeleteParams{UserID: &userID, ID: &id})
	if err != nil {
		return postgres.Error(err, "session")
	}
	if n == 0 {
		return apperr.New(apperr.NotFound, "no such session")
	}
	return nil
}
