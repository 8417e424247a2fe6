// Package operator is the operator's side of a deployment: accounts as tenants,
// created, listed, suspended, resumed and deleted under the operator's own key
// (never a tenant's), with the quotas each account is held to, and the purger
// that removes a deleted account's rows in batches.
package operator

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"strings"
)

// keyPrefix starts every operator key: never a tenant key's "so_", so neither
// is taken for the other.
const keyPrefix = "soop_"

// Key checks the operator's key against its SHA-256, which is all the
// configuration holds (SENDONCE_OPERATOR_KEY_HASH): the key is 240 random bits,
// so a fast hash is enough (there is nothing to guess from it), and a leaked
// configuration does not leak the key.
type Key struct {
	sum []byte // nil: no operator key configured, the operator API refuses everything
}

// ParseKeyHash reads SENDONCE_OPERATOR_KEY_HASH: the hex SHA-256 of the key,
// optionally written "sha256:<hex>"; empty means no operator API.
func ParseKeyHash(s string) (Key, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "sha256:")
	if s == "" {
		return Key{}, nil
	}
	sum, err := hex.DecodeString(s)
	if err != nil || len(sum) != sha256.Size {
		return Key{}, fmt.Errorf("SENDONCE_OPERATOR_KEY_HASH must be the hex SHA-256 of the operator key (64 hex digits; `sendonce operator key` makes both)")
	}
	return Key{sum: sum}, nil
}

// Enabled reports whether an operator key is configured.
func (k Key) Enabled() bool { return k.sum != nil }

// Matches reports, in constant time, whether token is the operator key.
func (k Key) Matches(token string) bool {
	if k.sum == nil || !strings.HasPrefix(token, keyPrefix) || len(token) > 200 {
		return false
	}
	sum := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(sum[:], k.sum) == 1
}

// NewKey makes an operator key and the hash to configure for it.
func NewKey() (token, hash string, err error) {
	var raw [30]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", "", err
	}
	token = keyPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:]))
	sum := sha256.Sum256([]byte(token))
	return token, hex.EncodeToString(sum[:]), nil
}
