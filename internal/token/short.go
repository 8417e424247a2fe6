package token

import (
	"crypto/hmac"
	"encoding/base32"
	"strings"
)

// ShortTagLen is the length of a short token's MAC: HMAC-SHA256 truncated to 80
// bits (RFC 2104 §5 allows truncation to no less than half the output or 80
// bits). Forging one takes 2^80 guesses, each of which has to travel as a mail.
const ShortTagLen = 10

// shortVersion is the first byte of the tokens SealShort makes.
const shortVersion = 1

// short32 is lowercase base32 without padding: case folds onto one spelling,
// since mail systems may lowercase the local part that carries the token.
var short32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// SealShort returns a token for places where the base64url of Seal does not fit:
// a mail address's local part (at most 64 octets, RFC 5321 §4.5.3.1.1, compared
// case-insensitively by some relays). It carries no key id, to stay short: Open
// tries each key of the ring. The text is version, payload and a truncated tag in
// lowercase base32, under the same per-purpose HMAC domain as Seal.
func (r *Ring) SealShort(purpose string, payload []byte) string {
	buf := make([]byte, 0, 1+len(payload)+32)
	buf = append(buf, shortVersion)
	buf = append(buf, payload...)
	buf = r.keys[0].MAC(purposeDomain(purpose), buf, buf)
	return short32.EncodeToString(buf[:len(buf)-32+ShortTagLen])
}

// OpenShort verifies a token SealShort made for purpose, in any letter case, with
// any key of the ring, and returns its payload; every failure is ErrInvalidToken.
func (r *Ring) OpenShort(purpose, token string) ([]byte, error) {
	if len(token) > 128 || strings.ContainsAny(token, "\r\n") {
		return nil, ErrInvalidToken
	}
	lower := strings.ToLower(token)
	raw, err := short32.DecodeString(lower)
	// Re-encoding refuses the spellings that differ only in the last letter's
	// unused bits, which the decoder ignores: one token, one spelling.
	if err != nil || short32.EncodeToString(raw) != lower || len(raw) < 1+ShortTagLen || raw[0] != shortVersion {
		return nil, ErrInvalidToken
	}
	signed, tag := raw[:len(raw)-ShortTagLen], raw[len(raw)-ShortTagLen:]
	ok := false
	for i := range r.keys {
		// Every key is tried, so the time taken does not say which one matched.
		if hmac.Equal(tag, r.keys[i].MAC(purposeDomain(purpose), nil, signed)[:ShortTagLen]) {
			ok = true
		}
	}
	if !ok {
		return nil, ErrInvalidToken
	}
	return signed[1:], nil
}
