// Package account creates accounts and their API keys and authenticates requests.
package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sendwindow"
	"github.com/sendonce/sendonce/internal/store"
)

// keyPrefix starts every API key, so a leaked key is recognisable by secret scanners.
const keyPrefix = "so_"

// prefixLen is how much of a key is stored in clear to find it and to show humans.
const prefixLen = len(keyPrefix) + 12

// Service manages accounts and keys.
type Service struct {
	pool *pgxpool.Pool
}

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

// Account is a tenant.
type Account struct {
	ID   int64
	Name string
	// PublicID names the account on public routes (the sign-up form): random and
	// stable, unlike ID it reveals nothing and cannot be walked.
	PublicID  string
	CreatedAt time.Time
	// UnsubscribeScope is what a one-click unsubscribe removes the address from:
	// "list" (the campaign's lists) or "account" (every mail: a suppression).
	UnsubscribeScope string
	// FourEyes bars a campaign's creator from approving it.
	FourEyes bool
	// TimeZone is the IANA zone a campaign's deliver_at_local applies in for a
	// subscriber without a valid attributes.timezone (default UTC).
	TimeZone string
}

func fromStore(a store.Account) Account {
	return Account{ID: a.ID, Name: a.Name, PublicID: a.PublicID, CreatedAt: a.CreatedAt,
		UnsubscribeScope: a.UnsubscribeScope, FourEyes: a.FourEyes, TimeZone: a.TimeZone}
}

// Get returns an account by id.
func (s *Service) Get(ctx context.Context, id int64) (Account, error) {
	a, err := store.New(s.pool).AccountGetByID(ctx, id)
	if err != nil {
		return Account{}, postgres.Error(err, "account")
	}
	return fromStore(a), nil
}

// Settings are the account settings PATCH /v1/account changes; nil leaves one as it is.
type Settings struct {
	UnsubscribeScope *string
	FourEyes         *bool
	TimeZone         *string
}

// Update changes the account's settings, in a transaction (which carries the
// request's audit entry).
func (s *Service) Update(ctx context.Context, id int64, set Settings) (Account, error) {
	if set.UnsubscribeScope != nil && *set.UnsubscribeScope != "list" && *set.UnsubscribeScope != "account" {
		return Account{}, apperr.Invalidf("/unsubscribe_scope", "unsubscribe_scope must be list or account")
	}
	if z := set.TimeZone; z != nil {
		if !sendwindow.ValidZone(*z) {
			return Account{}, apperr.Invalidf("/time_zone", "%q is not an IANA time zone", *z)
		}
	}
	var out Account
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		a, err := store.New(tx).AccountUpdateSettings(ctx, store.AccountUpdateSettingsParams{
			UnsubscribeScope: set.UnsubscribeScope, FourEyes: set.FourEyes, TimeZone: set.TimeZone, AccountID: id})
		if err != nil {
			return postgres.Error(err, "account")
		}
		out = fromStore(a)
		return nil
	})
	return out, err
}

// SetUnsubscribeScope changes the account's unsubscribe scope (list or account).
func (s *Service) SetUnsubscribeScope(ctx context.Context, id int64, scope string) (Account, error) {
	if scope != "list" && scope != "account" {
		return Account{}, apperr.Invalidf("/unsubscribe_scope", "unsubscribe_scope must be list or account")
	}
	a, err := store.New(s.pool).AccountSetUnsubscribeScope(ctx, store.AccountSetUnsubscribeScopeParams{UnsubscribeScope: scope, AccountID: id})
	if err != nil {
		return Account{}, postgres.Error(err, "account")
	}
	return Account{ID: a.ID, Name: a.Name, PublicID: a.PublicID, CreatedAt: a.CreatedAt, UnsubscribeScope: a.UnsubscribeScope}, nil
}

// Create makes an account with one API key and returns the key's token, the only
// time it is ever seen.
func (s *Service) Create(ctx context.Context, name string) (Account, string, error) {
	var acc Account
	var token string
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		acc, token, err = CreateIn(ctx, store.New(tx), name)
		return err
	})
	return acc, token, postgres.Error(err, "account")
}

// CreateIn is Create in the transaction q runs in, for a caller that writes more
// with the new account in that transaction (the operator: its quotas and audit entry).
func CreateIn(ctx context.Context, q *store.Queries, name string) (Account, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		return Account{}, "", apperr.Invalidf("/name", "account name must be 1 to 200 characters")
	}
	a, err := q.AccountCreate(ctx, name)
	if err != nil {
		return Account{}, "", err
	}
	token, err := createKey(ctx, q, a.ID, "default", RoleFull)
	if err != nil {
		return Account{}, "", err
	}
	return Account{ID: a.ID, Name: a.Name, PublicID: a.PublicID, CreatedAt: a.CreatedAt}, token, nil
}

// CreateKey adds an API key to an account and returns its token.
func (s *Service) CreateKey(ctx context.Context, accountID int64, name string) (string, error) {
	token, err := createKey(ctx, store.New(s.pool), accountID, name, RoleFull)
	return token, postgres.Error(err, "api key")
}

// FindByName returns the oldest account with that name.
func (s *Service) FindByName(ctx context.Context, name string) (Account, error) {
	a, err := store.New(s.pool).AccountGetFirstByName(ctx, name)
	if err != nil {
		return Account{}, postgres.Error(err, "account")
	}
	return Account{ID: a.ID, Name: a.Name, PublicID: a.PublicID, CreatedAt: a.CreatedAt}, nil
}

func createKey(ctx context.Context, q *store.Queries, accountID int64, name, role string) (string, error) {
	token, _, err := createKeySpec(ctx, q, accountID, name, role, nil, nil)
	return token, err
}

func createKeySpec(ctx context.Context, q *store.Queries, accountID int64, name, role string, perms []string, lists []int64) (string, int64, error) {
	var raw [30]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", 0, err
	}
	token := keyPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:]))
	sum := sha256.Sum256([]byte(token))
	row, err := q.APIKeyCreate(ctx, store.APIKeyCreateParams{
		AccountID: accountID, Name: name, Prefix: token[:prefixLen], TokenHash: sum[:], Role: role,
		Permissions: perms, ListIds: lists,
	})
	return token, row.ID, err
}

// wellFormed reports whether token can be a key createKey made: the prefix, then
// lowercase base32 only. Anything else (other bytes, multi-byte characters, NUL,
// absurd lengths) is refused before the database sees it.
func wellFormed(token string) bool {
	if len(token) < prefixLen+8 || len(token) > 200 || !strings.HasPrefix(token, keyPrefix) {
		return false
	}
	for i := len(keyPrefix); i < len(token); i++ {
		if c := token[i]; !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// Authenticate returns the account a bearer token belongs to. The key is found by its
// visible prefix and its hash compared in constant time; any failure is unauthorized.
func (s *Service) Authenticate(ctx context.Context, token string) (int64, error) {
	k, err := s.AuthenticateKey(ctx, token)
	return k.AccountID, err
}

// ErrSuspended refuses a key or session of an account its operator suspended.
var ErrSuspended = apperr.New(apperr.AccountSuspended, "account suspended: its operator suspended this account; nothing is sent or changed until it is resumed")

// Caller is an authenticated API key: its id, name and account, and what it may do.
type Caller struct {
	ID        int64
	AccountID int64
	Name      string
	// Role is the key's role name (access.RoleCustom: Permissions lists what it may do).
	Role        string
	Permissions access.Set
	// ListIDs are the lists the key may act on; nil means every list.
	ListIDs []int64
}

// AuthenticateKey is Authenticate that also says which key it was (what a stream
// token and a dashboard session record, so that revoking the key revokes them).
func (s *Service) AuthenticateKey(ctx context.Context, token string) (Caller, error) {
	unauthorized := apperr.New(apperr.Unauthorized, "a valid API key is required: Authorization: Bearer <key>")
	if !wellFormed(token) {
		return Caller{}, unauthorized
	}
	q := store.New(s.pool)
	row, err := q.APIKeyGetByPrefix(ctx, token[:prefixLen])
	if err != nil {
		if apperr.Is(postgres.Error(err, "key"), apperr.NotFound) {
			return Caller{}, unauthorized
		}
		return Caller{}, err
	}
	sum := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(sum[:], row.TokenHash) != 1 {
		return Caller{}, unauthorized
	}
	if row.Suspended {
		return Caller{}, ErrSuspended
	}
	if row.TouchDue {
		_ = q.APIKeyTouch(ctx, row.ID)
	}
	return Caller{ID: row.ID, AccountID: row.AccountID, Name: row.Name, Role: row.Role,
		Permissions: KeyPermissions(row.Role, row.Permissions), ListIDs: row.ListIds}, nil
}
