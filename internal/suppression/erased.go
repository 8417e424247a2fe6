package suppression

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/token"
)

// ReasonErasure is the reason of the one row an erasure keeps: a keyed hash of
// the erased address, never the address itself (Erased).
const ReasonErasure = "erasure"

// erasedPrefix starts the key of an erased address's suppression row. No address
// can equal such a key: it has no '@'.
const erasedPrefix = "erased:"

// erasedPurpose derives the hashing key from each key of the ring.
const erasedPurpose = "sendonce.erasure.address.v1"

// Erased hashes erased addresses with keys derived from the deployment's key ring
// (SENDONCE_UNSUBSCRIBE_SECRET). An erasure stores the hash under the signing key;
// a check computes it under every key of the ring, so an address erased before a
// key rotation stays recognised for as long as the old key stays in the ring (as
// it must anyway, for the unsubscribe links already mailed). The keys never reach
// the database: a copy of it alone cannot test guessed addresses against the
// hashes.
type Erased struct {
	keys [][]byte
}

// NewErased returns the hasher of ring; nil ring gives nil, which recognises nothing.
func NewErased(ring *token.Ring) *Erased {
	if ring == nil {
		return nil
	}
	e := &Erased{}
	for _, k := range ring.Keys() {
		e.keys = append(e.keys, k.Derive(erasedPurpose))
	}
	return e
}

func hashKey(key []byte, lower string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(lower))
	return erasedPrefix + hex.EncodeToString(m.Sum(nil))
}

// Key is the suppression key an erasure of the address (lower case) stores.
func (e *Erased) Key(lower string) string { return hashKey(e.keys[0], lower) }

// Keys are the suppression keys an erased address may be stored under, one per key
// of the ring.
func (e *Erased) Keys(lower string) []string {
	out := make([]string, len(e.keys))
	for i, k := range e.keys {
		out[i] = hashKey(k, lower)
	}
	return out
}

// IsErasedKey reports whether a suppression's key is an erased address's hash.
func IsErasedKey(emailLower string) bool {
	return len(emailLower) > len(erasedPrefix) && emailLower[:len(erasedPrefix)] == erasedPrefix
}

// Recall suppresses again, by their plain addresses, the addresses among lowers
// (lower case) that were erased from the account, in db (the transaction that
// brings them back: a create, an import batch, a sign-up, a message). The build and
// the claim look for suppressions by address; this puts the address there, so
// every check that reads suppressions sees the erased address without knowing
// about hashes. The address comes back into the database only because the tenant
// (or the person) brought it back, and it comes back suppressed.
func (e *Erased) Recall(ctx context.Context, db store.DBTX, accountID int64, lowers ...string) (int64, error) {
	if e == nil || len(lowers) == 0 {
		return 0, nil
	}
	emails := make([]string, 0, len(lowers)*len(e.keys))
	hashes := make([]string, 0, len(lowers)*len(e.keys))
	for _, l := range lowers {
		for _, k := range e.keys {
			emails = append(emails, l)
			hashes = append(hashes, hashKey(k, l))
		}
	}
	n, err := store.New(db).SuppressionRecallErased(ctx, store.SuppressionRecallErasedParams{
		AccountID: accountID, Emails: emails, Hashes: hashes})
	if err != nil {
		return 0, fmt.Errorf("recall erased addresses: %w", err)
	}
	return n, nil
}
