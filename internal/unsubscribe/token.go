// Package unsubscribe signs and verifies one-click unsubscribe tokens (RFC 8058) and
// applies the opt-out they carry. A token names an account, a campaign and a
// subscriber; it carries no address and never expires, because a link in an old
// message must keep working (CAN-SPAM asks for at least 30 days; we never stop).
package unsubscribe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"
)

// tokenVersion is the first byte of every payload, so the format can change later
// without old links breaking.
const tokenVersion = 1

// domain separates these MACs from any other use of the same secret.
const domain = "sendonce.unsubscribe.v1"

// tagLen is the length of the MAC: a full, untruncated SHA-256 output.
const tagLen = sha256.Size

// ErrNoKey is returned by NewSigner without keys. There is deliberately no built-in
// fallback key: a public key lets anyone forge links for sequential ids and suppress
// every tenant's subscribers.
var ErrNoKey = errors.New("SENDONCE_UNSUBSCRIBE_SECRET is not set: set it to one or more keyid:secret pairs, " +
	"comma separated, the first signing (e.g. k1:<32 random bytes in hex>; secrets at least 16 bytes)")

// ErrInvalidToken is returned for every token that does not verify. It says nothing
// about why, so the endpoint is not an oracle.
var ErrInvalidToken = errors.New("unsubscribe: invalid token")

// Claims is what a valid token says.
type Claims struct {
	KeyID        string
	AccountID    int64
	CampaignID   int64
	SubscriberID int64
}

type key struct {
	id     string
	secret []byte
	// macs holds HMAC states keyed with secret: Reset restores the keyed state, so
	// no key schedule runs per token.
	macs *sync.Pool
}

func newKey(id string, secret []byte) key {
	return key{id: id, secret: secret, macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, secret) }}}
}

// mac returns HMAC-SHA256(secret, domain || payload) appended to dst.
func (k *key) mac(dst, payload []byte) []byte { return k.macIn(domain, dst, payload) }

// macIn is mac under another domain, for tokens of other purposes.
func (k *key) macIn(domain string, dst, payload []byte) []byte {
	h := k.macs.Get().(hash.Hash)
	h.Reset()
	h.Write([]byte(domain))
	h.Write(payload)
	dst = h.Sum(dst)
	k.macs.Put(h)
	return dst
}

// Signer makes and checks tokens with a key ring: the first key signs, every key verifies.
type Signer struct {
	keys []key
}

// NewSigner parses `keyid:secret` pairs; without any it returns ErrNoKey. Key ids
// must be 1–32 characters without ':'; secrets at least 16 bytes.
func NewSigner(pairs []string) (*Signer, error) {
	s := &Signer{}
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
		s.keys = append(s.keys, newKey(id, []byte(secret)))
	}
	return s, nil
}

// Token returns the URL-safe token for one recipient of one campaign.
func (s *Signer) Token(accountID, campaignID, subscriberID int64) string {
	var buf [160]byte
	return string(s.appendToken(buf[:0], accountID, campaignID, subscriberID))
}

// appendToken appends the token Token returns to dst.
func (s *Signer) appendToken(dst []byte, accountID, campaignID, subscriberID int64) []byte {
	k := &s.keys[0]
	var buf [2 + 32 + 3*binary.MaxVarintLen64 + tagLen]byte
	payload := append(buf[:0], tokenVersion, byte(len(k.id)))
	payload = append(payload, k.id...)
	payload = binary.AppendUvarint(payload, uint64(accountID))
	payload = binary.AppendUvarint(payload, uint64(campaignID))
	payload = binary.AppendUvarint(payload, uint64(subscriberID))
	return base64.RawURLEncoding.AppendEncode(dst, k.mac(payload, payload))
}

// Verify checks a token in constant time against the key it names and returns its claims.
func (s *Signer) Verify(token string) (Claims, error) {
	raw, ok := decodeToken(token)
	if !ok || len(raw) < 2+tagLen || raw[0] != tokenVersion {
		return Claims{}, ErrInvalidToken
	}
	payload, tag := raw[:len(raw)-tagLen], raw[len(raw)-tagLen:]
	idLen := int(payload[1])
	if 2+idLen > len(payload) {
		return Claims{}, ErrInvalidToken
	}
	kid := string(payload[2 : 2+idLen])
	var k *key
	for i := range s.keys {
		if s.keys[i].id == kid {
			k = &s.keys[i]
		}
	}
	if k == nil || !hmac.Equal(tag, k.mac(nil, payload)) {
		return Claims{}, ErrInvalidToken
	}
	rest := payload[2+idLen:]
	var ids [3]int64
	for i := range ids {
		v, n := binary.Uvarint(rest)
		if n <= 0 || v == 0 || v > 1<<62 {
			return Claims{}, ErrInvalidToken
		}
		ids[i], rest = int64(v), rest[n:]
	}
	if len(rest) != 0 {
		return Claims{}, ErrInvalidToken
	}
	return Claims{KeyID: kid, AccountID: ids[0], CampaignID: ids[1], SubscriberID: ids[2]}, nil
}

// Seal returns a URL-safe token carrying payload for purpose, in the format of the
// unsubscribe tokens (version, key id, payload, HMAC-SHA256 tag) but under the
// domain "sendonce.<purpose>.v1", so a token of one purpose never verifies as
// another's. The payload is signed, not encrypted.
func (s *Signer) Seal(purpose string, payload []byte) string {
	k := &s.keys[0]
	buf := make([]byte, 0, 2+len(k.id)+len(payload)+tagLen)
	buf = append(buf, tokenVersion, byte(len(k.id)))
	buf = append(buf, k.id...)
	buf = append(buf, payload...)
	return base64.RawURLEncoding.EncodeToString(k.macIn(purposeDomain(purpose), buf, buf))
}

// Open verifies a token Seal made for purpose with any key of the ring, in constant
// time, and returns its payload; every failure is ErrInvalidToken.
func (s *Signer) Open(purpose, token string) ([]byte, error) {
	if len(token) > 1024 {
		return nil, ErrInvalidToken
	}
	raw, ok := decodeToken(token)
	if !ok || len(raw) < 2+tagLen || raw[0] != tokenVersion {
		return nil, ErrInvalidToken
	}
	signed, tag := raw[:len(raw)-tagLen], raw[len(raw)-tagLen:]
	idLen := int(signed[1])
	if 2+idLen > len(signed) {
		return nil, ErrInvalidToken
	}
	kid := string(signed[2 : 2+idLen])
	for i := range s.keys {
		if k := &s.keys[i]; k.id == kid {
			if !hmac.Equal(tag, k.macIn(purposeDomain(purpose), nil, signed)) {
				return nil, ErrInvalidToken
			}
			return signed[2+idLen:], nil
		}
	}
	return nil, ErrInvalidToken
}

// strictURL is base64url without padding that refuses non-zero unused bits in
// the last character: leniently, up to 16 spellings decode to one token.
var strictURL = base64.RawURLEncoding.Strict()

// decodeToken decodes a token's base64url text so that one token has exactly one
// spelling: strict about the unused bits, and refusing CR and LF, which even the
// strict decoder skips anywhere.
func decodeToken(token string) ([]byte, bool) {
	if strings.ContainsAny(token, "\r\n") {
		return nil, false
	}
	raw, err := strictURL.DecodeString(token)
	return raw, err == nil
}

func purposeDomain(purpose string) string {
	if purpose == "unsubscribe" {
		panic("unsubscribe: Seal and Open are for other purposes than unsubscribe links")
	}
	return "sendonce." + purpose + ".v1"
}

// Links returns the function the executor calls per message: the https URL of the
// one-click endpoint and, when mailto is set, a mailto URI for List-Unsubscribe.
func (s *Signer) Links(publicURL, mailto string) func(accountID, campaignID, subscriberID int64) (httpsURL, mailtoURI string) {
	base := strings.TrimRight(publicURL, "/") + "/u/"
	return func(accountID, campaignID, subscriberID int64) (string, string) {
		var buf [256]byte
		https := string(s.appendToken(append(buf[:0], base...), accountID, campaignID, subscriberID))
		m := ""
		if mailto != "" {
			// The token is base64url, so it needs no escaping in the subject.
			m = "mailto:" + mailto + "?subject=unsubscribe%20" + https[len(base):]
		}
		return https, m
	}
}

// DeriveKey returns HMAC-SHA256(signing secret, purpose): a key for another use
// (the Message-ID key) that reveals nothing of the secret and follows it.
func (s *Signer) DeriveKey(purpose string) []byte {
	h := hmac.New(sha256.New, s.keys[0].secret)
	h.Write([]byte(purpose))
	return h.Sum(nil)
}
