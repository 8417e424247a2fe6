package account

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/text"
)

// Key is an API key as its account sees it: never the token, only the prefix
// that identifies it to a human.
type Key struct {
	ID         int64
	Name       string
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	// Role is RoleFull or RoleReadOnly.
	Role string
}

// The roles of a key. A read-only key may read everything and mint a stream token;
// the API refuses every request of it that changes something.
const (
	RoleFull     = "full"
	RoleReadOnly = "read_only"
)

// Keys returns up to limit of the account's keys, newest first, with ids below
// beforeID when it is not nil.
func (s *Service) Keys(ctx context.Context, accountID int64, beforeID *int64, limit int) ([]Key, error) {
	rows, err := store.New(s.pool).APIKeyList(ctx, store.APIKeyListParams{AccountID: accountID, BeforeID: beforeID, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Key, 0, len(rows))
	for _, r := range rows {
		out = append(out, Key(r))
	}
	return out, nil
}

// NewKey makes a named key with a role ("" is RoleFull) and returns it with its
// token, the only time the token is ever seen.
func (s *Service) NewKey(ctx context.Context, accountID int64, name, role string) (Key, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 || !text.Valid(name) {
		return Key{}, "", apperr.Invalidf("/name", "name must be 1 to 200 characters of text")
	}
	if role == "" {
		role = RoleFull
	}
	if role != RoleFull && role != RoleReadOnly {
		return Key{}, "", apperr.Invalidf("/role", "role must be full or read_only")
	}
	q := store.New(s.pool)
	token, err := createKey(ctx, q, accountID, name, role)
	if err != nil {
		return Key{}, "", postgres.Error(err, "api key")
	}
	row, err := q.APIKeyGetByPrefix(ctx, token[:prefixLen])
	if err != nil {
		return Key{}, "", postgres.Error(err, "api key")
	}
	k, err := s.Key(ctx, accountID, row.ID)
	return k, token, err
}

// Key returns one of the account's keys; another account's key is not found.
func (s *Service) Key(ctx context.Context, accountID, keyID int64) (Key, error) {
	r, err := store.New(s.pool).APIKeyGet(ctx, store.APIKeyGetParams{AccountID: accountID, KeyID: keyID})
	if err != nil {
		return Key{}, postgres.Error(err, "api key")
	}
	return Key(r), nil
}

// RevokeKey stops a key from authenticating, now and for good, and ends the
// dashboard sessions signed in with it and, through a notification on
// postgres.AuthorityChannel sent on commit, its open event streams in every process.
// Revoking a revoked key changes nothing.
func (s *Service) RevokeKey(ctx context.Context, accountID, keyID int64) (Key, error) {
	var k Key
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		r, err := q.APIKeyRevoke(ctx, store.APIKeyRevokeParams{AccountID: accountID, KeyID: keyID})
		if err != nil {
			return postgres.Error(err, "api key")
		}
		k = Key(r)
		return q.APIKeyRevokedNotify(ctx, store.APIKeyRevokedNotifyParams{Channel: postgres.AuthorityChannel, KeyID: r.ID})
	})
	return k, err
}
