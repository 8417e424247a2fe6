// Package session signs people into the dashboard: one-time login links, and the
// sessions they (or an API key) are exchanged for. A session token lives in an
// HttpOnly cookie, so the browser never holds an API key; the database holds only
// hashes of links and sessions.
package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

const (
	// LinkTTL is how long a login link works: long enough to copy it from a
	// terminal into a browser, short enough that one left in a scrollback is dead.
	LinkTTL = 15 * time.Minute
	// TTL is how long a session lasts; it is not extended by use, so a stolen
	// cookie is worth at most this long.
	TTL = 12 * time.Hour

	linkPrefix    = "sol_"
	sessionPrefix = "sos_"
)

// Service makes and checks login links and sessions.
type Service struct {
	pool     *pgxpool.Pool
	accounts *account.Service
	// Now is the clock of expiry; tests set it.
	Now func() time.Time
}

// NewService returns a Service on pool; keys are checked by accounts.
func NewService(pool *pgxpool.Pool, accounts *account.Service) *Service {
	return &Service{pool: pool, accounts: accounts, Now: time.Now}
}

// Session is a signed-in dashboard.
type Session struct {
	// Token goes in the cookie and nowhere else.
	Token string
	// ID names the session in the stream tokens it mints.
	ID        int64
	AccountID int64
	// KeyID is the API key the session was signed in with (0: a login link).
	KeyID     int64
	ExpiresAt time.Time
	// Role is the role of the key the session was signed in with; a session from
	// a login link is account.RoleFull.
	Role string
	// Permissions is what the session may do: its key's (a login link: full's).
	Permissions access.Set
	// KeyName is the name of the key the session was signed in with (the actor's
	// label in the audit log); ListIDs are the lists that key may act on (nil: all).
	KeyName string
	ListIDs []int64
	// UserID is the person signed in (0: a login link or a key), with their
	// address and their role in AccountID as it is now (Role and Permissions are
	// then that role's).
	UserID     int64
	UserEmail  string
	MemberRole string
	// NeedsTwoFactor is a member of an account that requires a second factor
	// who has none yet: the session may only enrol one.
	NeedsTwoFactor bool
	// ViaSSO is a person's session signed in through the account's identity
	// provider: it acts in AccountID only (no switching, no changes to the
	// person's own credentials) and needs no second factor of sendonce's.
	ViaSSO bool
}

// CSRF is the anti-forgery token of the session: what the dashboard sends back in
// a header on every request that changes something. A page on another site can
// make the browser send the cookie, but it cannot read this value, which only
// same-origin script gets (from the sign-in answer). Knowing it reveals nothing
// of the session token.
func (s Session) CSRF() string { return CSRF(s.Token) }

// CSRF is the anti-forgery token of a session token.
func CSRF(sessionToken string) string {
	sum := sha256.Sum256([]byte("sendonce csrf\x00" + sessionToken))
	return hex.EncodeToString(sum[:])
}

// NewLoginLink makes a single-use login token for the account, valid for LinkTTL.
func (s *Service) NewLoginLink(ctx context.Context, accountID int64) (string, time.Time, error) {
	now := s.Now()
	token, hash := newToken(linkPrefix)
	q := store.New(s.pool)
	exp := now.Add(LinkTTL)
	if err := q.LoginLinkCreate(ctx, store.LoginLinkCreateParams{AccountID: accountID, TokenHash: hash, ExpiresAt: exp}); err != nil {
		return "", time.Time{}, postgres.Error(err, "account")
	}
	_, _ = q.LoginLinkPurge(ctx, now.Add(-time.Hour))
	return token, exp, nil
}

// SignInWithLink exchanges a login token for a session. The token works once, and
// only before it expires; any failure is the same 401.
func (s *Service) SignInWithLink(ctx context.Context, token string) (Session, error) {
	if !wellFormed(token, linkPrefix) {
		return Session{}, errLink
	}
	now := s.Now()
	accountID, err := store.New(s.pool).LoginLinkUse(ctx, store.LoginLinkUseParams{Now: &now, TokenHash: hashOf(token)})
	if err != nil {
		if apperr.Is(postgres.Error(err, "link"), apperr.NotFound) {
			return Session{}, errLink
		}
		return Session{}, err
	}
	return s.create(ctx, accountID, nil)
}

var errLink = apperr.New(apperr.Unauthorized, "the login link is unknown, used or expired; ask for another (sendonce account login NAME)")

// SignInWithKey exchanges an API key for a session that ends when the key is
// revoked. The key itself is not kept.
func (s *Service) SignInWithKey(ctx context.Context, key string) (Session, error) {
	k, err := s.accounts.AuthenticateKey(ctx, strings.TrimSpace(key))
	if err != nil {
		return Session{}, err
	}
	sess, err := s.create(ctx, k.AccountID, &k.ID)
	sess.KeyID, sess.Role, sess.Permissions, sess.KeyName, sess.ListIDs = k.ID, k.Role, k.Permissions, k.Name, k.ListIDs
	return sess, err
}

func (s *Service) create(ctx context.Context, accountID int64, keyID *int64) (Session, error) {
	now := s.Now()
	token, hash := newToken(sessionPrefix)
	q := store.New(s.pool)
	exp := now.Add(TTL)
	if err := q.SessionCreate(ctx, store.SessionCreateParams{AccountID: accountID, ApiKeyID: keyID, TokenHash: hash, ExpiresAt: exp}); err != nil {
		return Session{}, postgres.Error(err, "session")
	}
	_, _ = q.SessionPurge(ctx, now)
	return Session{Token: token, AccountID: accountID, ExpiresAt: exp, Role: account.RoleFull,
		Permissions: account.KeyPermissions(account.RoleFull, nil)}, nil
}

// Get returns the live session of a token; anything else is unauthorized.
func (s *Service) Get(ctx context.Context, token string) (Session, error) {
	gone := apperr.New(apperr.Unauthorized, "the session has ended; sign in again")
	if !wellFormed(token, sessionPrefix) {
		return Session{}, gone
	}
	now := s.Now()
	row, err := store.New(s.pool).SessionAccount(ctx, store.SessionAccountParams{TokenHash: hashOf(token), Now: &now})
	if err != nil {
		if apperr.Is(postgres.Error(err, "session"), apperr.NotFound) {
			return Session{}, gone
		}
		return Session{}, err
	}
	if row.Suspended {
		return Session{}, account.ErrSuspended
	}
	sess := Session{Token: token, ID: row.ID, AccountID: row.AccountID, ExpiresAt: row.ExpiresAt,
		Role: row.Role, Permissions: account.KeyPermissions(row.Role, row.Permissions), ListIDs: row.ListIds,
		UserEmail: row.UserEmail, MemberRole: row.MemberRole, NeedsTwoFactor: row.NeedsTwoFactor, ViaSSO: row.ViaSso}
	if row.ApiKeyID != nil {
		sess.KeyID = *row.ApiKeyID
	}
	if row.KeyName != nil {
		sess.KeyName = *row.KeyName
	}
	if row.UserID != nil {
		// A person's session has their membership's role, as it is now.
		sess.UserID = *row.UserID
		sess.Role = row.MemberRole
		sess.Permissions = account.KeyPermissions(row.MemberRole, nil)
	}
	return sess, nil
}

// SignInUser makes a session of user userID in accountID, after the caller proved
// who they are (password, email link, second factor). replacing is the session
// token the browser held before, if any: it ends here, so a session id planted
// in a browser before sign-in is never the signed-in one (no fixation).
func (s *Service) SignInUser(ctx context.Context, userID, accountID int64, replacing string) (Session, error) {
	return s.signIn(ctx, userID, accountID, replacing, false)
}

// SignInUserViaSSO is SignInUser for a person the account's identity provider
// signed in (internal/sso): the session is marked, so it acts in accountID only.
func (s *Service) SignInUserViaSSO(ctx context.Context, userID, accountID int64, replacing string) (Session, error) {
	return s.signIn(ctx, userID, accountID, replacing, true)
}

func (s *Service) signIn(ctx context.Context, userID, accountID int64, replacing string, viaSSO bool) (Session, error) {
	now := s.Now()
	token, hash := newToken(sessionPrefix)
	q := store.New(s.pool)
	exp := now.Add(TTL)
	var id int64
	var err error
	if viaSSO {
		id, err = q.SSOSessionCreate(ctx, store.SSOSessionCreateParams{AccountID: accountID, UserID: &userID,
			TokenHash: hash, ExpiresAt: exp})
	} else {
		id, err = q.UserSessionCreate(ctx, store.UserSessionCreateParams{AccountID: accountID, UserID: &userID,
			TokenHash: hash, ExpiresAt: exp})
	}
	if err != nil {
		return Session{}, postgres.Error(err, "session")
	}
	if replacing != "" {
		if err := s.SignOut(ctx, replacing); err != nil {
			return Session{}, err
		}
	}
	_, _ = q.SessionPurge(ctx, now)
	return Session{Token: token, ID: id, AccountID: accountID, UserID: userID, ExpiresAt: exp, ViaSSO: viaSSO}, nil
}

// HashOf is the stored form of a session token (to tell a user's current
// session among their others).
func HashOf(token string) []byte { return hashOf(token) }

// SignOut ends the session of token (if any), and the event streams of the
// stream tokens it minted, in every process.
func (s *Service) SignOut(ctx context.Context, token string) error {
	if !wellFormed(token, sessionPrefix) {
		return nil
	}
	return store.New(s.pool).SessionDelete(ctx, store.SessionDeleteParams{Channel: postgres.AuthorityChannel,
		TokenHash: hashOf(token)})
}

func newToken(prefix string) (string, []byte) {
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails (Go 1.24+)
	token := prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:]))
	return token, hashOf(token)
}

func hashOf(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// wellFormed refuses, before the database sees it, anything newToken cannot have made.
func wellFormed(token, prefix string) bool {
	if len(token) != len(prefix)+52 || !strings.HasPrefix(token, prefix) {
		return false
	}
	for _, c := range []byte(token[len(prefix):]) {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// LinkURL is the dashboard address that signs in with a login token. The token is
// in the fragment, which a browser never sends to a server: it reaches no access
// log and no Referer, and the dashboard removes it from the address bar.
func LinkURL(publicURL, token string) string {
	return strings.TrimRight(publicURL, "/") + "/app#/login/" + token
}
