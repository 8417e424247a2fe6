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
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"

	"github.com/sendonce/sendonce/internal/token"
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
const tagLen = token.TagLen

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

// key is a key of the ring with what a message token's address needs.
type key struct {
	*token.Key
	// address encrypts a message token's address (AES-256-GCM under a key derived
	// from the key's secret).
	address cipher.AEAD
}

func newKey(k *token.Key) key {
	block, err := aes.NewCipher(k.Derive(addressDomain))
	if err != nil {
		panic(err) // a 32-byte key: cannot fail
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return key{Key: k, address: aead}
}

// mac returns HMAC-SHA256(secret, domain || payload) appended to dst.
func (k *key) mac(dst, payload []byte) []byte { return k.MAC(domain, dst, payload) }

// Signer makes and checks unsubscribe tokens with the deployment's key ring: the
// first key signs, every key verifies.
type Signer struct {
	ring *token.Ring
	keys []key
}

// NewSigner returns the signer of unsubscribe tokens under ring's keys.
func NewSigner(ring *token.Ring) *Signer {
	s := &Signer{ring: ring}
	for _, k := range ring.Keys() {
		s.keys = append(s.keys, newKey(k))
	}
	return s
}

// Ring is the key ring s signs with, for other signed links (tracking, double
// opt-in confirmations) to share its keys and rotation.
func (s *Signer) Ring() *token.Ring { return s.ring }

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
	dst = append(dst, tokenV2, byte(len(k.ID())))
	dst = append(dst, k.ID()...)
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
	payload := make([]byte, 0, 3+len(k.ID())+3*binary.MaxVarintLen64+12+len(email)+16+tagLen)
	payload = k.header(payload, KindMessage)
	payload = binary.AppendUvarint(payload, uint64(accountID))
	payload = binary.AppendUvarint(payload, uint64(streamID))
	payload = binary.AppendUvarint(payload, uint64(messageID))
	header := append([]byte(nil), payload...) // additional data must not overlap Seal's dst
	nonce := k.MAC(addressDomain, nil, append(header[:len(header):len(header)], email...))[:k.address.NonceSize()]
	signed := append(payload, nonce...)
	signed = k.address.Seal(signed, nonce, []byte(email), header)
	return base64.RawURLEncoding.AppendEncode(dst, k.mac(signed, signed))
}

// Verify checks a token in constant time against the key it names and returns its
// claims. Version 1 tokens verify as they always did, as kind send.
func (s *Signer) Verify(tok string) (Claims, error) {
	raw, ok := token.Decode(tok)
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
		if s.keys[i].ID() == kid {
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
