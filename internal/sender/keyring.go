package sender

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeyRing encrypts sender credentials with AES-256-GCM. It is read from
// SENDONCE_SECRETS_KEY: `keyid:base64key,…` where each key is 32 bytes in standard
// base64. The first key encrypts; every key decrypts, so a new key is put first,
// the stored credentials re-encrypted (`sendonce senders rotate-secrets`), and the
// old key removed afterwards.
type KeyRing struct {
	first string
	keys  map[string]cipher.AEAD
}

// ParseKeyRing reads `keyid:base64key,…` (entries may also come pre-split, as
// envconfig splits on commas). An empty ring is valid and encrypts nothing.
func ParseKeyRing(entries []string) (*KeyRing, error) {
	r := &KeyRing{keys: map[string]cipher.AEAD{}}
	for _, e := range entries {
		for part := range strings.SplitSeq(e, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			id, b64, ok := strings.Cut(part, ":")
			if !ok || id == "" || len(id) > 64 || strings.ContainsAny(id, " \t") {
				return nil, errors.New("SENDONCE_SECRETS_KEY: each entry is keyid:base64key (the key id before the colon)")
			}
			key, err := base64.StdEncoding.DecodeString(b64)
			if err != nil || len(key) != 32 {
				return nil, fmt.Errorf("SENDONCE_SECRETS_KEY: key %q must be 32 bytes in standard base64 (openssl rand -base64 32)", id)
			}
			if _, dup := r.keys[id]; dup {
				return nil, fmt.Errorf("SENDONCE_SECRETS_KEY: key id %q appears twice", id)
			}
			block, _ := aes.NewCipher(key)
			aead, _ := cipher.NewGCM(block)
			r.keys[id] = aead
			if r.first == "" {
				r.first = id
			}
		}
	}
	return r, nil
}

// NewKeyRingEntry returns a fresh `keyid:base64key` entry (for `dev` and tests).
func NewKeyRingEntry(id string) string {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return id + ":" + base64.StdEncoding.EncodeToString(key)
}

// Empty reports whether the ring has no key.
func (r *KeyRing) Empty() bool { return r == nil || r.first == "" }

// errNoKey is returned when a credential must be stored but no key is configured.
var errNoKey = errors.New("SENDONCE_SECRETS_KEY is not set: sender credentials cannot be stored")

// Seal encrypts plaintext under the first key; aad binds the ciphertext to its
// owner, so a ciphertext copied to another account's row does not decrypt.
func (r *KeyRing) Seal(plaintext, aad []byte) (keyID string, sealed []byte, err error) {
	if r.Empty() {
		return "", nil, errNoKey
	}
	aead := r.keys[r.first]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, err
	}
	return r.first, aead.Seal(nonce, nonce, plaintext, aad), nil
}

// Open decrypts what Seal returned.
func (r *KeyRing) Open(keyID string, sealed, aad []byte) ([]byte, error) {
	if r == nil {
		return nil, errNoKey
	}
	aead, ok := r.keys[keyID]
	if !ok {
		return nil, fmt.Errorf("key %q is not in SENDONCE_SECRETS_KEY", keyID)
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("ciphertext too short")
	}
	n := aead.NonceSize()
	pt, err := aead.Open(nil, sealed[:n], sealed[n:], aad)
	if err != nil {
		return nil, fmt.Errorf("key %q does not decrypt it (wrong key material)", keyID)
	}
	return pt, nil
}

// First is the id of the key that encrypts.
func (r *KeyRing) First() string { return r.first }
