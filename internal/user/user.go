// Package user is the people of accounts: users (one per address, over every
// account), their memberships and roles, invitations, sign-in by password or by
// a one-time email link, password reset, a TOTP second factor with recovery
// codes, and the sessions a user holds. Sessions themselves are internal/session's;
// this package decides who may have one, for which account.
package user

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/session"
	"github.com/sendonce/sendonce/internal/store"
)

// The roles a member may have, most powerful first.
const (
	RoleOwner    = "owner"
	RoleAdmin    = "admin"
	RoleEditor   = "editor"
	RoleApprover = "approver"
	RoleViewer   = "viewer"
)

// Roles lists every role.
var Roles = []string{RoleOwner, RoleAdmin, RoleEditor, RoleApprover, RoleViewer}

// Lifetimes of what is mailed or handed out.
const (
	// InvitationTTL: an invitation waits a week for its address to accept it.
	InvitationTTL = 7 * 24 * time.Hour
	// LinkTTL: an email sign-in link works once, within 15 minutes.
	LinkTTL = 15 * time.Minute
	// ResetTTL: a password reset link works once, within 30 minutes.
	ResetTTL = 30 * time.Minute
	// ChallengeTTL: between a right first factor and the TOTP code.
	ChallengeTTL = 5 * time.Minute
	// RecoveryCodes is how many single-use recovery codes an enrolment makes.
	RecoveryCodes = 10
)

const (
	invitePrefix    = "soi_"
	linkPrefix      = "sou_"
	resetPrefix     = "sor_"
	challengePrefix = "soc_"
)

// Mailer sends the service's own mail (invitations, sign-in links, password
// resets): the deployment's provider, which `sendonce dev` keeps for the dev inbox.
type Mailer interface {
	Send(ctx context.Context, m provider.Message) (providerMessageID string, err error)
}

// Options configure a Service.
type Options struct {
	// PublicURL is the base of the links mailed (the dashboard's address).
	PublicURL string
	// From and FromName are the sender of the service's own mail.
	From, FromName string
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// Logger logs mail that could not be sent; nil means slog.Default.
	Logger *slog.Logger
}

// Service manages users, memberships and sign-in.
type Service struct {
	pool     *pgxpool.Pool
	sessions *session.Service
	ring     *sender.KeyRing
	mail     Mailer
	opts     Options
	// mailing tracks background sends, so tests can wait for them.
	mailing chan struct{}
}

// NewService returns a Service that makes sessions with sessions, seals TOTP
// secrets with ring (the sender credentials' key ring) and sends mail with mail.
func NewService(pool *pgxpool.Pool, sessions *session.Service, ring *sender.KeyRing, mail Mailer, o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	return &Service{pool: pool, sessions: sessions, ring: ring, mail: mail, opts: o, mailing: make(chan struct{}, 64)}
}

// Actor is who manages members: a member (UserID and Role) or an API key (Key).
type Actor struct {
	UserID int64
	Role   string
	Key    bool
}

// may reports whether the actor may manage members at all, and owners.
func (a Actor) may() (members, owners bool) {
	if a.Key {
		return true, true // a full key holds the whole account
	}
	return a.Role == RoleOwner || a.Role == RoleAdmin, a.Role == RoleOwner
}

func checkRole(pointer, role string) error {
	for _, r := range Roles {
		if role == r {
			return nil
		}
	}
	return apperr.Invalidf(pointer, "must be one of owner, admin, editor, approver, viewer")
}

var (
	errMembers = apperr.New(apperr.Forbidden, "managing members needs the owner or admin role")
	errOwners  = apperr.New(apperr.Forbidden, "only an owner may make, change or remove an owner")
	errSignIn  = apperr.New(apperr.Unauthorized, "the email address or the password is wrong")
	// errCurrentPassword refuses a password change whose current password is wrong.
	errCurrentPassword = apperr.New(apperr.Unauthorized, "the current password is wrong")
	errToken           = apperr.New(apperr.Unauthorized, "the link is unknown, used or expired; ask for another")
	errCode            = apperr.New(apperr.Unauthorized, "the code is wrong, used or expired")
)

// newToken returns a random token with prefix and its stored hash.
func newToken(prefix string) (string, []byte) {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	t := prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:]))
	return t, hashOf(t)
}

func hashOf(s string) []byte {
	sum := sha256.Sum256([]byte(s))
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

// parseEmail normalises an address for the users table.
func parseEmail(pointer, s string) (address.Address, error) {
	a, err := address.Parse(s)
	if err != nil {
		return a, apperr.Invalidf(pointer, "%v", err)
	}
	return a, nil
}

// notFound reports whether err is a query's "no row".
func notFound(err error) bool { return postgres.NoRows(err) }

func (s *Service) inTx(ctx context.Context, fn func(q *store.Queries) error) error {
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error { return fn(store.New(tx)) })
}

// endSessions ends sessions of userID (all, or those of accountID, or one) with
// the notification that ends their event streams.
func endSessions(ctx context.Context, q *store.Queries, p store.UserSessionDeleteParams) (int, error) {
	p.Channel = postgres.AuthorityChannel
	rows, err := q.UserSessionDelete(ctx, p)
	return len(rows), err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
