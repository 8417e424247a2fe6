package unsubscribe_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// newSigner is the signer of unsubscribe tokens on a ring of pairs.
func newSigner(pairs []string) (*unsubscribe.Signer, error) {
	ring, err := token.NewRing(pairs)
	if err != nil {
		return nil, err
	}
	return unsubscribe.NewSigner(ring), nil
}

func TestTokenRoundTripAndRotation(t *testing.T) {
	t.Parallel()
	old, err := newSigner([]string{"k1:first-secret-0123456789"})
	require.NoError(t, err)
	tok := old.Token(7, 42, 1234567)
	require.NotContains(t, tok, "@")
	require.Regexp(t, `^[A-Za-z0-9_-]+$`, tok, "URL-safe")

	c, err := old.Verify(tok)
	require.NoError(t, err)
	require.Equal(t, unsubscribe.Claims{KeyID: "k1", Kind: unsubscribe.KindSend, AccountID: 7, CampaignID: 42,
		SubscriberID: 1234567}, c)

	// After rotation k2 signs and k1 still verifies links in old messages.
	rotated, err := newSigner([]string{"k2:second-secret-0123456789", "k1:first-secret-0123456789"})
	require.NoError(t, err)
	c, err = rotated.Verify(tok)
	require.NoError(t, err)
	require.Equal(t, int64(42), c.CampaignID)
	c, err = rotated.Verify(rotated.Token(7, 42, 1))
	require.NoError(t, err)
	require.Equal(t, "k2", c.KeyID)

	// Once k1 is removed its tokens stop verifying.
	only2, err := newSigner([]string{"k2:second-secret-0123456789"})
	require.NoError(t, err)
	_, err = only2.Verify(tok)
	require.ErrorIs(t, err, unsubscribe.ErrInvalidToken)
}

func TestTokenTampering(t *testing.T) {
	t.Parallel()
	s, err := newSigner([]string{"k1:first-secret-0123456789"})
	require.NoError(t, err)
	tok := s.Token(1, 2, 3)
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	require.NoError(t, err)
	for i := range raw {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x01
		_, err := s.Verify(base64.RawURLEncoding.EncodeToString(b))
		require.ErrorIs(t, err, unsubscribe.ErrInvalidToken, "flipped byte %d", i)
	}
	wrong, err := newSigner([]string{"k1:another-secret-0123456789"})
	require.NoError(t, err)
	_, err = wrong.Verify(tok)
	require.ErrorIs(t, err, unsubscribe.ErrInvalidToken, "same key id, other secret")
	for _, bad := range []string{"", "x", "!!!", tok + "A", tok[:len(tok)-1], strings.Repeat("A", 200)} {
		_, err := s.Verify(bad)
		require.ErrorIs(t, err, unsubscribe.ErrInvalidToken, bad)
	}
}

// Links never expire, so the token formats are pinned: these strings were computed
// independently of this package (Python's hmac, base64 and cryptography modules)
// from the documented formats. Version 1, signed until tokens had kinds, is
// base64url(0x01 | len(kid) | kid | uvarint(account) | uvarint(campaign) |
// uvarint(subscriber) | HMAC-SHA256(secret, "sendonce.unsubscribe.v1" | payload)):
// links already sent, which must keep verifying. A change that alters any of them
// breaks every link already sent.
var tokenVectors = []struct {
	keys                          []string
	account, campaign, subscriber int64
	token                         string
}{
	{[]string{"k1:first-secret-0123456789"}, 1, 2, 3, "AQJrMQECAwCM-9SXBa-OuJyBTcSN2gUoHdPryfTZkCCdhrDYyvQj"},
	{[]string{"k1:first-secret-0123456789", "old:second-secret-0123456789"}, 7, 140, 123456789,
		"AQJrMQeMAZWa7zoldNLxyLNzV3YwmBHcwTYWoULBOj7NajiALIyx3iiYPQ"},
	{[]string{"k1:first-secret-0123456789"}, 1 << 62, 1 << 62, 1 << 62,
		"AQJrMYCAgICAgICAQICAgICAgICAQICAgICAgICAQLabpz10a8RGOgC1Oxl_N-vXdasjiJxETE67sMtwEHxP"},
	{[]string{"k1:first-secret-0123456789"}, 127, 128, 16383, "AQJrMX-AAf9_uR1iqchjmbdVdMss9pzkvB31FNNtjFLozydh2oUiLTI"},
	{[]string{"a-32-character-key-id-0123456789:0123456789abcdef0123456789abcdef"}, 42, 43, 44,
		"ASBhLTMyLWNoYXJhY3Rlci1rZXktaWQtMDEyMzQ1Njc4OSorLB4P19m4v_XK6X0eScZPNh38zAFMUAGA8GPqMvZ48gv1"},
}

// Version 2 send tokens: base64url(0x02 | len(kid) | kid | 0x01 (kind send) |
// uvarint(account) | uvarint(campaign) | uvarint(subscriber) | tag).
var sendVectors = []struct {
	account, campaign, subscriber int64
	token                         string
}{
	{1, 2, 3, "AgJrMQEBAgO-PRM2mq4tQCDLBT8Uu4IqTpHiJsHQDIlCOuKFC3VPIg"},
	{7, 140, 123456789, "AgJrMQEHjAGVmu86EEe1sfSByKMShweOhrhN4m5eopID-3qCrC6dlJWC2_Q"},
	{1 << 62, 1 << 62, 1 << 62, "AgJrMQGAgICAgICAgECAgICAgICAgECAgICAgICAgED1uJSXfai4OIOAYWdnPePshcrDNTtfGUFo8JVqQvUf1Q"},
}

// Version 2 message tokens: base64url(header | nonce | AES-256-GCM(key, nonce,
// email, additional data header) | tag) where header = 0x02 | len(kid) | kid |
// 0x02 (kind message) | uvarint(account) | uvarint(stream) | uvarint(message),
// key = HMAC-SHA256(secret, "sendonce.unsubscribe.address.v2"), nonce = the first
// 12 bytes of HMAC-SHA256(secret, "sendonce.unsubscribe.address.v2" | header |
// email), and tag as above over everything before it.
var messageVectors = []struct {
	account, stream, message int64
	email, token             string
}{
	{1, 2, 3, "ada@example.com",
		"AgJrMQIBAgOVObJXFdGVhXU7ynJyY0xqBuom0K1u5SpDPyNorvM1f7vS9SW0votLITmXzO5OKi4i_7ADhaOoQbh1jPM7ZFLoFIiNhBPQlh1AXS4"},
	{7, 140, 123456789, "Bob.Smith+news@Example.ORG",
		"AgJrMQIHjAGVmu86VqBZL4zoCpjaQ0K_I8zjbCwLAJBf-PL4pOv4N-SlnAYoyI4M0gktb4OUcdI7FNFUFm4GpjETkHaj2Jqc4gNpZIcvdMAX5Xhocbn8QXAWrSpCc0GtYTg"},
}

func TestTokenVectors(t *testing.T) {
	t.Parallel()
	for _, v := range tokenVectors {
		s, err := newSigner(v.keys)
		require.NoError(t, err)
		c, err := s.Verify(v.token)
		require.NoError(t, err)
		require.Equal(t, unsubscribe.Claims{KeyID: strings.SplitN(v.keys[0], ":", 2)[0], Kind: unsubscribe.KindSend,
			AccountID: v.account, CampaignID: v.campaign, SubscriberID: v.subscriber}, c)
	}
	s, err := newSigner([]string{"k1:first-secret-0123456789"})
	require.NoError(t, err)
	for _, v := range sendVectors {
		require.Equal(t, v.token, s.Token(v.account, v.campaign, v.subscriber), "%+v", v)
		c, err := s.Verify(v.token)
		require.NoError(t, err)
		require.Equal(t, unsubscribe.Claims{KeyID: "k1", Kind: unsubscribe.KindSend,
			AccountID: v.account, CampaignID: v.campaign, SubscriberID: v.subscriber}, c)
	}
	for _, v := range messageVectors {
		require.Equal(t, v.token, s.MessageToken(v.account, v.stream, v.message, v.email), "%+v", v)
		c, err := s.Verify(v.token)
		require.NoError(t, err)
		require.Equal(t, unsubscribe.Claims{KeyID: "k1", Kind: unsubscribe.KindMessage,
			AccountID: v.account, CampaignID: v.stream, MessageID: v.message, Email: v.email}, c)
		raw, err := base64.RawURLEncoding.DecodeString(v.token)
		require.NoError(t, err)
		require.NotContains(t, strings.ToLower(string(raw)), "example", "the address is encrypted")
	}
}

// A message token's every byte is covered: flipping any one refuses it, and a
// message token never verifies as a send token of the same ids.
func TestMessageTokenTampering(t *testing.T) {
	t.Parallel()
	s, err := newSigner([]string{"k1:first-secret-0123456789"})
	require.NoError(t, err)
	tok := s.MessageToken(1, 2, 3, "ada@example.com")
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	require.NoError(t, err)
	for i := range raw {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x01
		_, err := s.Verify(base64.RawURLEncoding.EncodeToString(b))
		require.ErrorIs(t, err, unsubscribe.ErrInvalidToken, "flipped byte %d", i)
	}
	c, err := s.Verify(s.Token(1, 2, 3))
	require.NoError(t, err)
	require.Equal(t, unsubscribe.KindSend, c.Kind)
	require.Zero(t, c.MessageID)
	require.Empty(t, c.Email)
}

func TestLinks(t *testing.T) {
	t.Parallel()
	s, err := newSigner([]string{"k1:first-secret-0123456789"})
	require.NoError(t, err)
	https, mailto := s.Links("https://mail.example.com/", "unsub@example.com")(1, 2, 3)
	require.Equal(t, "https://mail.example.com/u/"+sendVectors[0].token, https)
	require.Equal(t, "mailto:unsub@example.com?subject=unsubscribe%20"+sendVectors[0].token, mailto)
	_, mailto = s.Links("https://x", "")(1, 2, 3)
	require.Empty(t, mailto)
	https, mailto = s.MessageLinks("https://mail.example.com/", "unsub@example.com")(1, 2, 3, "ada@example.com")
	require.Equal(t, "https://mail.example.com/u/"+messageVectors[0].token, https)
	require.Equal(t, "mailto:unsub@example.com?subject=unsubscribe%20"+messageVectors[0].token, mailto)
}

func FuzzVerify(f *testing.F) {
	s, err := newSigner([]string{"k1:first-secret-0123456789"})
	require.NoError(f, err)
	f.Add(s.Token(1, 2, 3))
	f.Add(s.MessageToken(1, 2, 3, "ada@example.com"))
	f.Add("AQJrMQ")
	// The base64 decoder skips CR and LF: a token with one inserted must not verify.
	f.Add("AQJrMQECAwCM-9\rSXBa-OuJyBTcSN2gUoHdPryfTZkCCdhrDYyvQj")
	f.Add("AQJrMQECAwCM-9SXBa-OuJyBTcSN2gUoHdPryfTZkCCdhrDYyvQj\n")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := s.Verify(tok)
		if err != nil {
			return
		}
		again := s.Token(c.AccountID, c.CampaignID, c.SubscriberID)
		switch {
		case c.Kind == unsubscribe.KindMessage:
			again = s.MessageToken(c.AccountID, c.CampaignID, c.MessageID, c.Email)
		case tok[0] == 'A' && tok[1] == 'Q': // version 1, no longer signed
			return
		}
		if again != tok {
			t.Fatalf("a different token verified: %q", tok)
		}
	})
}

// A token whose length leaves unused bits in its last base64 character verifies
// under exactly one spelling: the last character changed in those bits only
// decodes to the same bytes under lenient decoding, and must be refused, for
// unsubscribe links (the tokens of internal/token are held to the same there).
func TestTokenUnusedBitsRefused(t *testing.T) {
	t.Parallel()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	// sameBytes returns the other spellings of tok's last character that decode
	// to the same bytes when unused bits are ignored.
	sameBytes := func(tok string) []string {
		unused := (6 * len(tok)) % 8
		last := strings.IndexByte(alphabet, tok[len(tok)-1])
		var out []string
		for i := range 1 << unused {
			if v := last&^(1<<unused-1) | i; v != last {
				out = append(out, tok[:len(tok)-1]+string(alphabet[v]))
			}
		}
		return out
	}
	tried := 0
	for _, v := range tokenVectors {
		s, err := newSigner(v.keys)
		require.NoError(t, err)
		for _, alt := range sameBytes(v.token) {
			tried++
			_, err := s.Verify(alt)
			require.ErrorIs(t, err, unsubscribe.ErrInvalidToken, "%q for %q", alt, v.token)
		}
	}
	require.Greater(t, tried, 10, "the vectors must include tokens with unused bits")
}
