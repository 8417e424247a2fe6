package account

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/audit"
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
	// Role is one of access's role names, or access.RoleCustom for a key with an
	// explicit permission list.
	Role string
	// Permissions is the explicit list of a custom key; nil for a key with a role.
	Permissions []string
	// ListIDs are the lists the key may act on; nil means every list.
	ListIDs []int64
}

// The roles keys had before roles existed, still valid (access maps them to
// admin's and viewer's permissions).
const (
	RoleFull     = access.RoleFull
	RoleReadOnly = access.RoleReadOnly
)

// KeySpec is what a new key may do: a role, or an explicit permission list, and
// optionally the lists it may act on.
type KeySpec struct {
	// Role is a role name ("" with no Permissions: RoleFull).
	Role string
	// Permissions, when not nil, makes a custom key with exactly these.
	Permissions []string
	// ListIDs, when not nil, restricts the key to these lists.
	ListIDs []int64
}

// Grants returns the permissions of spec, or a validation error naming the field.
func (spec KeySpec) Grants() (access.Set, error) {
	if spec.Permissions != nil {
		if spec.Role != "" {
			return nil, apperr.Invalidf("/permissions", "give a role or a permission list, not both")
		}
		if len(spec.Permissions) == 0 {
			return nil, apperr.Invalidf("/permissions", "a key needs at least one permission")
		}
		set, bad := access.ParseList(spec.Permissions)
		if bad != "" {
			return nil, apperr.Invalidf("/permissions", "%q is not a permission", bad)
		}
		return set, nil
	}
	role := spec.Role
	if role == "" {
		role = RoleFull
	}
	set, ok := access.RolePermissions(role)
	if !ok || role == access.RoleCustom {
		return nil, apperr.Invalidf("/role", "role must be one of %s", access.RoleNames())
	}
	return set, nil
}

// KeyPermissions returns what a key with this role and explicit list may do.
func KeyPermissions(role string, permissions []string) access.Set {
	if role == access.RoleCustom {
		set, _ := access.ParseList(permissions)
		return set
	}
	set, _ := access.RolePermissions(role)
	return set
}

func keyOf(id int64, name, prefix string, created time.Time, used, revoked *time.Time, role string, perms []string, lists []int64) Key {
	return Key{ID: id, Name: name, Prefix: prefix, CreatedAt: created, LastUsedAt: used, RevokedAt: revoked,
		Role: role, Permissions: perms, ListIDs: lists}
}

// Keys returns up to limit of the account's keys, newest first, with ids below
// beforeID when it is not nil.
func (s *Service) Keys(ctx context.Context, accountID int64, beforeID *int64, limit int) ([]Key, error) {
	rows, err := store.New(s.pool).APIKeyList(ctx, store.APIKeyListParams{AccountID: accountID, BeforeID: beforeID, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Key, 0, len(rows))
	for _, r := range rows {
		out = append(out, keyOf(r.ID, r.Name, r.Prefix, r.CreatedAt, r.LastUsedAt, r.RevokedAt, r.Role, r.Permissions, r.ListIds))
	}
	return out, nil
}

// NewKey makes a named key as spec says and returns it with its token, the only
// time the token is ever seen. The caller checks that whoever asks holds what
// the key is given (spec.Grants). The key is made in a transaction, so the
// request's audit entry (if any) is written with it.
func (s *Service) NewKey(ctx context.Context, accountID int64, name string, spec KeySpec) (Key, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 || !text.Valid(name) {
		return Key{}, "", apperr.Invalidf("/name", "name must be 1 to 200 characters of text")
	}
	if _, err := spec.Grants(); err != nil {
		return Key{}, "", err
	}
	role, perms := spec.Role, spec.Permissions
	switch {
	case perms != nil:
		role = access.RoleCustom
	case role == "":
		role = RoleFull
	}
	var k Key
	var token string
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		var id int64
		var err error
		token, id, err = createKeySpec(ctx, q, accountID, name, role, perms, spec.ListIDs)
		if err != nil {
			return postgres.Error(err, "api key")
		}
		r, err := q.APIKeyGet(ctx, store.APIKeyGetParams{AccountID: accountID, KeyID: id})
		if err != nil {
			return postgres.Error(err, "api key")
		}
		k = keyOf(r.ID, r.Name, r.Prefix, r.CreatedAt, r.LastUsedAt, r.RevokedAt, r.Role, r.Permissions, r.ListIds)
		audit.SetTarget(ctx, strconv.FormatInt(id, 10))
		return nil
	})
	if err != nil {
		return Key{}, "", err
	}
	return k, token, nil
}

// Key returns one of the account's keys; another account's key is not found.
func (s *Service) Key(ctx context.Context, accountID, keyID int64) (Key, error) {
	r, err := store.New(s.pool).APIKeyGet(ctx, store.APIKeyGetParams{AccountID: accountID, KeyID: keyID})
	if err != nil {
		return Key{}, postgres.Error(err, "api key")
	}
	return keyOf(r.ID, r.Name, r.Prefix, r.CreatedAt, r.LastUsedAt, r.RevokedAt, r.Role, r.Permissions, r.ListIds), nil
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
		k = keyOf(r.ID, r.Name, r.Prefix, r.CreatedAt, r.LastUsedAt, r.RevokedAt, r.Role, r.Permissions, r.ListIds)
		return q.APIKeyRevokedNotify(ctx, store.APIKeyRevokedNotifyParams{Channel: postgres.AuthorityChannel, KeyID: r.ID})
	})
	return k, err
}
