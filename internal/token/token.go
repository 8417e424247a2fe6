// Package token signs short URL-safe tokens with the deployment's key ring (the
// keyid:secret pairs of SENDONCE_UNSUBSCRIBE_SECRET): the first key signs, every
// key verifies, so a secret can be rotated while links already sent keep working.
// Each purpose signs under its own HMAC domain, "sendonce.<purpose>.v1", so a
// token of one purpose never verifies as another's; the one-click unsubscribe
// links (internal/unsubscribe) use the same keys under their own format. Tokens
// never expire, so their format is fixed: a change breaks links already sent.
package token

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"
)

// sealVersion is the first byte of the tokens Seal makes.
const sealVersion = 1

// TagLen is the length of the MAC: a full, untruncated SHA-256 output.
const TagLen = sha256.Size

// ErrNoKey is returned by NewRing without keys. There is deliberately no built-in
// fallback key: a public key lets anyone forge links for sequential ids and suppress
// every tenant's subscribers.
var ErrNoKey = errors.New("SENDONCE_UNSUBSCRIBE_SECRET is not set: set it to one or more keyid:secret pairs, " +
	"comma separated, the first signing (e.g. k1:<32 random bytes in hex>; secrets at least 16 bytes)")

// ErrInvalidToken is returned by Open for every token that does not verify. It
// says nothing about why, so an endpoint is not an oracle.
var ErrInvalidToken = errors.New("token: invalid token")

// Key is one key of a ring.
type Key struct {
	id     string
	secret []byte
	// macs holds HMAC states keyed with secret: Reset restores the keyed state, so
	// no key schedule runs per token.
	macs *sync.Pool
}

// ID is the key's id, which every token names so that it verifies under its key.
func (k *Key) ID() string { return k.id }

// MAC returns HMAC-SHA256(secret, domain || payload) appended to dst.
func (k *Key) MAC(domain string, dst, payload []byte) []byte {
	h := k.macs.Get().(hash.Hash)
	h.Reset()
	h.Write([]byte(domain))
	h.Write(payload)
	dst = h.Sum(dst)
	k.macs.Put(h)
	return dst
}

// Derive returns HMAC-SHA256(secret, purpose): a key for another use that
// reveals nothing of the secret.
func (k *Key) Derive(purpose string) []byte {
	h := hmac.New(sha256.New, k.secret)
	h.Write([]byte(purpose))
	return h.Sum(nil)
}

// Ring is the key ring: the first key signs, every key verifies.
type Ring struct {
	keys []Key
}

// NewRing parses `keyid:secret` pairs; without any it returns ErrNoKey. Key ids
// must be 1–32 characters without ':'; secrets at least 16 bytes.
func NewRing(pairs []string) (*Ring, error) {
	r := &Ring{}
	if len(pairs) == 0 {
		return nil, ErrNoKey
	}
	seen := map[string]bool{}
	for _, p := range pairs {
		id, secret, ok := strings.Cut(strings.TrimSpace(p), ":")
		switch {
		case !ok || id == "" || len(id) > 32:
			return nil, fmt.Errorf("unsubscribe secret: want keyid:secret with a key id of 1-32 characters")
		case len(secret) < 16:
			return nil, fmt.Errorf("unsubscribe secret %q: the secret must be at least 16 bytes", id)
		case seen[id]:
			return nil, fmt.Errorf("unsubscribe secret: key id %q appears twice", id)
		}
		seen[id] = true
		key := []byte(secret)
		r.keys = append(r.keys, Key{id: id, secret: key,
			macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}})
	}
	return r, nil
}

// Keys returns the ring's keys, the signing key first.
func (r *Ring) Keys() []*Key {
	out := make([]*Key, len(r.keys))
	for i := range r.keys {
		out[i] = &r.keys[i]
	}
	return out
}

// Seal returns a URL-safe token carrying payload for purpose (version, key id,
// payload, HMAC-SHA256 tag) under the domain "sendonce.<purpose>.v1", so a token
// of one purpose never verifies as another's. The payload is signed, not encrypted.
func (r *Ring) Seal(purpose string, payload []byte) string {
	k := &r.keys[0]
	buf := make([]byte, 0, 2+len(k.id)+len(payload)+TagLen)
	buf = append(buf, sealVersion, byte(len(k.id)))
	buf = append(buf, k.id...)
	buf = append(buf, payload...)
	return base64.RawURLEncoding.EncodeToString(k.MAC(purposeDomain(purpose), buf, buf))
}

// Open verifies a token Seal made for purpose with any key of the ring, in constant
// time, and returns its payload; every failure is ErrInvalidToken.
func (r *Ring) Open(purpose, token string) ([]byte, error) {
	if len(token) > 1024 {
		return nil, ErrInvalidToken
	}
	raw, ok := Decode(token)
	if !ok || len(raw) < 2+TagLen || raw[0] != sealVersion {
		return nil, ErrInvalidToken
	}
	signed, tag := raw[:len(raw)-TagLen], raw[len(raw)-TagLen:]
	idLen := int(signed[1])
	if 2+idLen > len(signed) {
		return nil, ErrInvalidToken
	}
	kid := string(signed[2 : 2+idLen])
	for i := range r.keys {
		if k := &r.keys[i]; k.id == kid {
			if !hmac.Equal(tag, k.MAC(purposeDomain(purpose), nil, signed)) {
				return nil, ErrInvalidToken
			}
			return signed[2+idLen:], nil
		}
	}
	return nil, ErrInvalidToken
}

// DeriveKey returns HMAC-SHA256(signing secret, purpose): a key for another use
// (the Message-ID key) that reveals nothing of the secret and follows it.
func (r *Ring) DeriveKey(purpose string) []byte { return r.keys[0].Derive(purpose) }

// strictURL is base64url without padding that refuses non-zero unused bits in
// the last character: leniently, up to 16 spellings decode to one token.
var strictURL = base64.RawURLEncoding.Strict()

// Decode decodes a token's base64url text so that one token has exactly one
// spelling: strict about the unused bits, and refusing CR and LF, which even the
// strict decoder skips anywhere.
func Decode(token string) ([]byte, bool) {
	if strings.ContainsAny(token, "\r\n") {
		return nil, false
	}
	raw, err := strictURL.DecodeString(token)
	return raw, err == nil
}

// purposeDomain is the HMAC domain of purpose. "unsubscribe" is reserved: its
// domain is the one-click links', which have their own format.
func purposeDomain(purpose string) string {
	if purpose == "unsubscribe" {
		panic("token: Seal and Open are for other purposes than unsubscribe links")
	}
	return "sendonce." + purpose + ".v1"
}
