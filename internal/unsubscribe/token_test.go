package unsubscribe_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/unsubscribe"
)

func TestTokenRoundTripAndRotation(t *testing.T) {
	t.Parallel()
	old, err := unsubscribe.NewSigner([]string{"k1:first-secret-0123456789"})
	require.NoError(t, err)
	tok := old.Token(7, 42, 1234567)
	require.NotContains(t, tok, "@")
	require.Regexp(t, `^[A-Za-z0-9_-]+$`, tok, "URL-safe")

	c, err := old.Verify(tok)
	require.NoError(t, err)
	require.Equal(t, unsubscribe.Claims{KeyID: "k1", AccountID: 7, CampaignID: 42, SubscriberID: 1234567}, c)

	// After rotation k2 signs and k1 still verifies links in old messages.
	rotated, err := unsubscribe.NewSigner([]string{"k2:second-secret-0123456789", "k1:first-secret-0123456789"})
	require.NoError(t, err)
	c, err = rotated.Verify(tok)
	require.NoError(t, err)
	require.Equal(t, int64(42), c.CampaignID)
	c, err = rotated.Verify(rotated.Token(7, 42, 1))
	require.NoError(t, err)
	require.Equal(t, "k2", c.KeyID)

	// Once k1 is removed its tokens stop verifying.
	only2, err := unsubscribe.NewSigner([]string{"k2:second-secret-0123456789"})
	require.NoError(t, err)
	_, err = only2.Verify(tok)
	require.ErrorIs(t, err, unsubscribe.ErrInvalidToken)
}

func TestTokenTampering(t *testing.T) {
	t.Parallel()
	s, err := unsubscribe.NewSigner([]string{"k1:first-secret-0123456789"})
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
	wrong, err := unsubscribe.NewSigner([]string{"k1:another-secret-0123456789"})
	require.NoError(t, err)
	_, err = wrong.Verify(tok)
	require.ErrorIs(t, err, unsubscribe.ErrInvalidToken, "same key id, other secret")
	for _, bad := range []string{"", "x", "!!!", tok + "A", tok[:len(tok)-1], strings.Repeat("A", 200)} {
		_, err := s.Verify(bad)
		require.ErrorIs(t, err, unsubscribe.ErrInvalidToken, bad)
	}
}

func TestNewSigner(t *testing.T) {
	t.Parallel()
	_, err := unsubscribe.NewSigner(nil)
	require.ErrorIs(t, err, unsubscribe.ErrNoKey)
	for _, bad := range [][]string{{"nocolon"}, {":secret-0123456789abc"}, {"k:short"}, {"k:0123456789abcdef", "k:0123456789abcdef"}} {
		_, err := unsubscribe.NewSigner(bad)
		require.Error(t, err, bad)
	}
}

func TestLinks(t *testing.T) {
	t.Parallel()
	s, err := unsubscribe.NewSigner([]string{"k1:first-secret-0123456789"})
	require.NoError(t, err)
	https, mailto := s.Links("https://mail.example.com/", "unsub@example.com")(1, 2, 3)
	require.Equal(t, "https://mail.example.com/u/"+s.Token(1, 2, 3), https)
	require.Equal(t, "mailto:unsub@example.com?subject=unsubscribe%20"+s.Token(1, 2, 3), mailto)
	_, mailto = s.Links("https://x", "")(1, 2, 3)
	require.Empty(t, mailto)
}

func FuzzVerify(f *testing.F) {
	s, err := unsubscribe.NewSigner([]string{"k1:first-secret-0123456789"})
	require.NoError(f, err)
	f.Add(s.Token(1, 2, 3))
	f.Add("AQJrMQ")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := s.Verify(tok)
		if err == nil && s.Token(c.AccountID, c.CampaignID, c.SubscriberID) != tok {
			t.Fatalf("a different token verified: %q", tok)
		}
	})
}
