// Package unsubscribe signs and verifies one-click unsubscribe tokens (RFC 8058) and
// applies the opt-out they carry. A token says what it names: one recipient of a
// campaign (account, campaign, subscriber), or a marketing message to an address
// (account, message stream, message, and the address, encrypted), so a message's
// link never acts on a subscriber whose id happens to equal the message's. Tokens
// never expire, because a link in an old message must keep working (CAN-SPAM asks
// for at least 30 days; we never stop).
package unsubscribe

import (
	"crypto/aes"
	"crypto/cipher"
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

// Token format versions, the first byte of every payload. Version 1 (until this
// format had kinds) holds three ids read as account, campaign and subscriber; it
// is still verified, because links in mail already sent must keep working, and
// the service reads it by the campaign it names (see Service.resolve). Version 2
// carries a kind byte after the key id.
const (
	tokenV1 = 1
	tokenV2 = 2
)

// sealVersion is the first byte of the tokens Seal makes (other purposes).
const sealVersion = 1

// Kind is what a token names.
type Kind byte

const (
	// KindSend names one recipient of a campaign: the subscriber, whose lists the
	// preference page shows and changes.
	KindSend Kind = 1
	// KindMessage names a marketing message and the address it went to; it acts
	// on that address only (a suppression, which blocks marketing), never on a
	// subscriber's lists. The address travels in the token, encrypted, so the
	// link keeps working after message retention deleted the message.
	KindMessage Kind = 2
)

// domain separates these MACs from any other use of the same secret.
const domain = "sendonce.unsubscribe.v1"

// addressDomain derives the key that encrypts a message token's address, and its
// nonce, from the signing secret.
const addressDomain = "sendonce.unsubscribe.address.v2"

// maxEmail bounds the address a message token carries.
const maxEmail = 320

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

// Claims is what a valid token says. A send token (and every version 1 token)
// fills CampaignID and SubscriberID; a message token fills CampaignID (the
// message stream), MessageID and Email.
type Claims struct {
	KeyID        string
	Kind         Kind
	AccountID    int64
	CampaignID   int64
	SubscriberID int64
	MessageID    int64
	Email        string
}

type key struct {
	id     string
	secret []byte
	// macs holds HMAC states keyed with secret: Reset restores the keyed state, so
	// no key schedule runs per token.
	macs *sync.Pool
	// address encrypts a message token's address (AES-256-GCM under a key derived
	// from secret).
	address cipher.AEAD
}

func newKey(id string, secret []byte) key {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(addressDomain))
	block, err := aes.NewCipher(h.Sum(nil))
	if err != nil {
		panic(err) // a 32-byte key: cannot fail
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return key{id: id, secret: secret, macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, secret) }},
		address: aead}
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

// MessageToken returns the URL-safe token for a marketing message to email.
func (s *Signer) MessageToken(accountID, streamID, messageID int64, email string) string {
	return string(s.appendMessageToken(nil, accountID, streamID, messageID, email))
}

// header appends the signed start of a version 2 payload: version, key id, kind.
func (k *key) header(dst []byte, kind Kind) []byte {
	dst = append(dst, tokenV2, byte(len(k.id)))
	dst = append(dst, k.id...)
	return append(dst, byte(kind))
}

// appendToken appends the token Token returns to dst.
func (s *Signer) appendToken(dst []byte, accountID, campaignID, subscriberID int64) []byte {
	k := &s.keys[0]
	var buf [3 + 32 + 3*binary.MaxVarintLen64 + tagLen]byte
	payload := k.header(buf[:0], KindSend)
	payload = binary.AppendUvarint(payload, uint64(accountID))
	payload = binary.AppendUvarint(payload, uint64(campaignID))
	payload = binary.AppendUvarint(payload, uint64(subscriberID))
	return base64.RawURLEncoding.AppendEncode(dst, k.mac(payload, payload))
}

// appendMessageToken appends a message token to dst: the version 2 header, the
// three ids, then the address sealed with AES-GCM (the signed bytes before it as
// additional data) under a nonce derived from everything it seals, so a message
// has one token and a nonce never seals two addresses; the HMAC tag last.
func (s *Signer) appendMessageToken(dst []byte, accountID, streamID, messageID int64, email string) []byte {
	k := &s.keys[0]
	payload := make([]byte, 0, 3+len(k.id)+3*binary.MaxVarintLen64+12+len(email)+16+tagLen)
	payload = k.header(payload, KindMessage)
	payload = binary.AppendUvarint(payload, uint64(accountID))
	payload = binary.AppendUvarint(payload, uint64(streamID))
	payload = binary.AppendUvarint(payload, uint64(messageID))
	header := append([]byte(nil), payload...) // additional data must not overlap Seal's dst
	nonce := k.macIn(addressDomain, nil, append(header[:len(header):len(header)], email...))[:k.address.NonceSize()]
	signed := append(payload, nonce...)
	signed = k.address.Seal(signed, nonce, []byte(email), header)
	return base64.RawURLEncoding.AppendEncode(dst, k.mac(signed, signed))
}

// Verify checks a token in constant time against the key it names and returns its
// claims. Version 1 tokens verify as they always did, as kind send.
func (s *Signer) Verify(token string) (Claims, error) {
	raw, ok := decodeToken(token)
	if !ok || len(raw) < 2+tagLen || (raw[0] != tokenV1 && raw[0] != tokenV2) {
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
	c := Claims{KeyID: kid, Kind: KindSend}
	rest := payload[2+idLen:]
	if payload[0] == tokenV2 {
		if len(rest) == 0 || (Kind(rest[0]) != KindSend && Kind(rest[0]) != KindMessage) {
			return Claims{}, ErrInvalidToken
		}
		c.Kind, rest = Kind(rest[0]), rest[1:]
	}
	var ids [3]int64
	for i := range ids {
		v, n := binary.Uvarint(rest)
		if n <= 0 || v == 0 || v > 1<<62 {
			return Claims{}, ErrInvalidToken
		}
		ids[i], rest = int64(v), rest[n:]
	}
	c.AccountID, c.CampaignID = ids[0], ids[1]
	if c.Kind == KindSend {
		if len(rest) != 0 {
			return Claims{}, ErrInvalidToken
		}
		c.SubscriberID = ids[2]
		return c, nil
	}
	c.MessageID = ids[2]
	ns := k.address.NonceSize()
	if len(rest) < ns+k.address.Overhead()+1 || len(rest) > ns+k.address.Overhead()+maxEmail {
		return Claims{}, ErrInvalidToken
	}
	header := payload[:len(payload)-len(rest)]
	email, err := k.address.Open(nil, rest[:ns], rest[ns:], header)
	if err != nil {
		return Claims{}, ErrInvalidToken
	}
	c.Email = string(email)
	return c, nil
}

// Seal returns a URL-safe token carrying payload for purpose, in the format of the
// unsubscribe tokens (version, key id, payload, HMAC-SHA256 tag) but under the
// domain "sendonce.<purpose>.v1", so a token of one purpose never verifies as
// another's. The payload is signed, not encrypted.
func (s *Signer) Seal(purpose string, payload []byte) string {
	k := &s.keys[0]
	buf := make([]byte, 0, 2+len(k.id)+len(payload)+tagLen)
	buf = append(buf, sealVersion, byte(len(k.id)))
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
	if !ok || len(raw) < 2+tagLen || raw[0] != sealVersion {
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

// Links returns the function the executor calls per campaign recipient: the https
// URL of the one-click endpoint and, when mailto is set, a mailto URI for
// List-Unsubscribe.
func (s *Signer) Links(publicURL, mailto string) func(accountID, campaignID, subscriberID int64) (httpsURL, mailtoURI string) {
	base := strings.TrimRight(publicURL, "/") + "/u/"
	return func(accountID, campaignID, subscriberID int64) (string, string) {
		var buf [256]byte
		return withMailto(string(s.appendToken(append(buf[:0], base...), accountID, campaignID, subscriberID)),
			len(base), mailto)
	}
}

// MessageLinks is Links for marketing messages: their tokens name the message and
// the address it went to (kind message), never a subscriber.
func (s *Signer) MessageLinks(publicURL, mailto string) func(accountID, streamID, messageID int64, email string) (httpsURL, mailtoURI string) {
	base := strings.TrimRight(publicURL, "/") + "/u/"
	return func(accountID, streamID, messageID int64, email string) (string, string) {
		return withMailto(string(s.appendMessageToken([]byte(base), accountID, streamID, messageID, email)), len(base), mailto)
	}
}

func withMailto(https string, baseLen int, mailto string) (string, string) {
	if mailto == "" {
		return https, ""
	}
	// The token is base64url, so it needs no escaping in the subject.
	return https, "mailto:" + mailto + "?subject=unsubscribe%20" + https[baseLen:]
}

// DeriveKey returns HMAC-SHA256(signing secret, purpose): a key for another use
// (the Message-ID key) that reveals nothing of the secret and follows it.
func (s *Signer) DeriveKey(purpose string) []byte {
	h := hmac.New(sha256.New, s.keys[0].secret)
	h.Write([]byte(purpose))
	return h.Sum(nil)
}
