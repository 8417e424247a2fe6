package token_test

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/token"
)

func mustRing(t *testing.T, pairs ...string) *token.Ring {
	t.Helper()
	r, err := token.NewRing(pairs)
	require.NoError(t, err)
	return r
}

func TestNewRing(t *testing.T) {
	t.Parallel()
	_, err := token.NewRing(nil)
	require.ErrorIs(t, err, token.ErrNoKey)
	for _, bad := range [][]string{{"nocolon"}, {":secret-0123456789abc"}, {"k:short"}, {"k:0123456789abcdef", "k:0123456789abcdef"}} {
		_, err := token.NewRing(bad)
		require.Error(t, err, bad)
	}
	r := mustRing(t, "k2:second-secret-0123456789", " k1:first-secret-0123456789")
	require.Len(t, r.Keys(), 2)
	require.Equal(t, "k2", r.Keys()[0].ID(), "the first key signs")
	require.Equal(t, "k1", r.Keys()[1].ID())
}

// Links carrying these tokens (click, open, web-view, opt-in confirmation) never
// expire, so the format is pinned: these strings were computed independently of
// this package (Python's hmac and base64 modules) from the documented format,
// base64url(0x01 | len(kid) | kid | payload | HMAC-SHA256(secret,
// "sendonce.<purpose>.v1" | everything before the tag)), and are the tokens the
// signer made before it was its own package. A change that alters any of them
// breaks every link already sent.
var sealVectors = []struct {
	keys             []string
	purpose, payload string
	token            string
}{
	{[]string{"k1:first-secret-0123456789", "old:second-secret-0123456789"}, "click", "\x07\x0c\x81\x01",
		"AQJrMQcMgQEwQ86mGBkSTDpprk5aMDBDlQQf5iPblnUIyysQKucCOQ"},
	{[]string{"k1:first-secret-0123456789"}, "optin-confirm", "payload",
		"AQJrMXBheWxvYWTiNFGjp9GhEbe8YrSHiiYk3euG7jf72237T-B2-x9xRw"},
	{[]string{"k1:first-secret-0123456789"}, "open", "",
		"AQJrMVaPAzQPefCsau2pXPbk5STtVGsSdL2NllHxul3ywg0T"},
	{[]string{"old:second-secret-0123456789"}, "click", "\x01\x02\x03",
		"AQNvbGQBAgPZywKL5ZtDvCDqnzEebEv08vOlIph-6b_AB-_smLcR4A"},
}

func TestSealVectors(t *testing.T) {
	t.Parallel()
	for _, v := range sealVectors {
		r := mustRing(t, v.keys...)
		require.Equal(t, v.token, r.Seal(v.purpose, []byte(v.payload)), "%+v", v)
		p, err := r.Open(v.purpose, v.token)
		require.NoError(t, err)
		require.Equal(t, v.payload, string(p))
	}
	// A token signed by a key the ring still holds opens after rotation.
	rotated := mustRing(t, "k2:third-secret-0123456789", "old:second-secret-0123456789")
	p, err := rotated.Open("click", sealVectors[3].token)
	require.NoError(t, err)
	require.Equal(t, "\x01\x02\x03", string(p))
	_, err = mustRing(t, "k2:third-secret-0123456789").Open("click", sealVectors[3].token)
	require.ErrorIs(t, err, token.ErrInvalidToken, "a removed key's tokens stop opening")
	_, err = rotated.Open("mclick", sealVectors[3].token)
	require.ErrorIs(t, err, token.ErrInvalidToken, "a token of one purpose never opens as another's")
}

// DeriveKey is the Message-ID key of deployments without SENDONCE_MESSAGE_ID_KEY:
// HMAC-SHA256(signing secret, purpose), computed independently (Python's hmac).
// Changing it changes every Message-ID, and replays would no longer be recognized.
func TestDeriveKeyVector(t *testing.T) {
	t.Parallel()
	r := mustRing(t, "k1:first-secret-0123456789", "old:second-secret-0123456789")
	require.Equal(t, "2a71b87c207035efe5bdfe43f1ec9bf4bc2cd8c0712008a237814bd3d09a2ef9",
		hex.EncodeToString(r.DeriveKey("sendonce.message-id.v1")))
	require.Equal(t, r.DeriveKey("x"), r.Keys()[0].Derive("x"))
}

func TestSealRefusesUnsubscribePurpose(t *testing.T) {
	t.Parallel()
	r := mustRing(t, "k1:first-secret-0123456789")
	require.Panics(t, func() { r.Seal("unsubscribe", nil) }, "that domain is the one-click links'")
	require.Panics(t, func() { _, _ = r.Open("unsubscribe", sealVectors[1].token) })
}

func TestOpenRefusesMalformed(t *testing.T) {
	t.Parallel()
	r := mustRing(t, "k1:first-secret-0123456789")
	tok := sealVectors[1].token
	for _, bad := range []string{"", "x", "!!!", tok + "A", tok[:len(tok)-1], tok[:10] + "\n" + tok[10:],
		tok + "\r", strings.Repeat("A", 1025), "AQ" + strings.Repeat("A", 60)} {
		_, err := r.Open("optin-confirm", bad)
		require.ErrorIs(t, err, token.ErrInvalidToken, "%q", bad)
	}
}

// A token whose length leaves unused bits in its last base64 character opens
// under exactly one spelling: the last character changed in those bits only
// decodes to the same bytes under lenient decoding, and must be refused.
func TestSealUnusedBitsRefused(t *testing.T) {
	t.Parallel()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
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
	s := mustRing(t, "k1:first-secret-0123456789")
	tried := 0
	for n := range 3 { // payload lengths that leave 2 and 4 unused bits
		sealed := s.Seal("optin", make([]byte, 1+n))
		_, err := s.Open("optin", sealed)
		require.NoError(t, err)
		for _, alt := range sameBytes(sealed) {
			tried++
			_, err := s.Open("optin", alt)
			require.ErrorIs(t, err, token.ErrInvalidToken, "%q for %q", alt, sealed)
		}
	}
	require.Greater(t, tried, 10, "the payloads must leave unused bits")
}
