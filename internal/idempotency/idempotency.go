// Package idempotency stores the keys and first responses of POSTs that carry an
// Idempotency-Key (Stripe's semantics, docs.stripe.com/api/idempotent_requests). The HTTP layer
// decides what to replay; this package owns the table.
package idempotency

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Store is the idempotency_keys table of every account.
type Store struct {
	db store.DBTX
}

// NewStore returns a Store on db (a pool).
func NewStore(db store.DBTX) *Store { return &Store{db: db} }

// Prior is a key already claimed by an earlier request.
type Prior struct {
	Method, Path string
	RequestHash  []byte
	// Status is nil while the earlier request is still running.
	Status *int
	Body   []byte
}

// Claim takes (account, key) for a request with the given fingerprint, in one INSERT
// … ON CONFLICT: true for a new key or one that expired (24 hours after its claim),
// false when a live claim exists (read it with Get).
func (s *Store) Claim(ctx context.Context, accountID int64, key, method, path string, hash []byte, now time.Time) (bool, error) {
	_, err := store.New(s.db).IdempotencyClaim(ctx, store.IdempotencyClaimParams{AccountID: accountID, Key: key,
		Method: method, Path: path, RequestHash: hash, Now: &now})
	if postgres.NoRows(err) {
		// The statement's only way to return no row: ON CONFLICT found a live
		// claim and its WHERE kept it. Read as such before any translation, so
		// no other error can pass for "already claimed".
		return false, nil
	}
	if err != nil {
		return false, postgres.Error(err, "idempotency key")
	}
	return true, nil
}

// Get returns the claim of (account, key); found is false when there is none (it was
// released after a failed request).
func (s *Store) Get(ctx context.Context, accountID int64, key string) (p Prior, found bool, err error) {
	row, err := store.New(s.db).IdempotencyGet(ctx, store.IdempotencyGetParams{AccountID: accountID, Key: key})
	if err = postgres.Error(err, "idempotency key"); apperr.Is(err, apperr.NotFound) {
		return Prior{}, false, nil
	}
	if err != nil {
		return Prior{}, false, err
	}
	p = Prior{Method: row.Method, Path: row.Path, RequestHash: row.RequestHash, Body: row.ResponseBody}
	if row.ResponseStatus != nil {
		st := int(*row.ResponseStatus)
		p.Status = &st
	}
	return p, true, nil
}

// Save stores the response of the request that claimed the key.
func (s *Store) Save(ctx context.Context, accountID int64, key string, status int, body []byte) error {
	st := int32(status)
	return store.New(s.db).IdempotencySave(ctx, store.IdempotencySaveParams{ResponseStatus: &st, ResponseBody: body,
		AccountID: accountID, Key: key})
}

// Release frees a claim that has no stored response, so the client can retry.
func (s *Store) Release(ctx context.Context, accountID int64, key string) error {
	return store.New(s.db).IdempotencyRelease(ctx, store.IdempotencyReleaseParams{AccountID: accountID, Key: key})
}

// Purge deletes up to max keys that expired by now and returns how many went. Keys
// are otherwise only replaced when their key is reused, so without this the table
// would keep every key ever sent.
func (s *Store) Purge(ctx context.Context, now time.Time, max int) (int64, error) {
	return store.New(s.db).IdempotencyPurgeExpired(ctx, store.IdempotencyPurgeExpiredParams{Now: &now, Max: int32(max)})
}
