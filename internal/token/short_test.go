package token_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/token"
)

// The vector was computed with Python's hmac and base64 modules from the
// documented format: lowercase base32(0x01 | payload | HMAC-SHA256(secret,
// "sendonce.<purpose>.v1" | 0x01 | payload)[:10]), unpadded. Return-Paths
// carrying these tokens are in flight for days: a change breaks their bounces.
func TestSealShortVector(t *testing.T) {
	t.Parallel()
	r := mustRing(t, "k1:first-secret-0123456789")
	payload := []byte{0x87, 0x0f, 0xc1, 0x9a, 0x0b}
	tok := r.SealShort("bounce", payload)
	require.Equal(t, "agdq7qm2bmbrx3ojkuqoerkaee", tok)
	got, err := r.OpenShort("bounce", strings.ToUpper(tok))
	require.NoError(t, err, "an MTA may change the letter case")
	require.Equal(t, payload, got)
}

func TestOpenShortRefuses(t *testing.T) {
	t.Parallel()
	r := mustRing(t, "k1:first-secret-0123456789")
	tok := r.SealShort("bounce", []byte{1, 2, 3})
	rotated := mustRing(t, "k2:second-secret-0123456789", "k1:first-secret-0123456789")
	got, err := rotated.OpenShort("bounce", tok)
	require.NoError(t, err, "a key rotated out of signing still verifies")
	require.Equal(t, []byte{1, 2, 3}, got)

	flip := []byte(tok)
	flip[3] ^= 1 // another base32 letter: another payload
	for _, bad := range []string{"", "a", tok + "a", tok[:len(tok)-1], string(flip), tok + "\n", "agdq7qm2bmbrx3ojkuqoerkae8", "agdq7qm2bmbrx3ojkuqoerkaef"} {
		_, err := r.OpenShort("bounce", bad)
		require.ErrorIs(t, err, token.ErrInvalidToken, bad)
	}
	_, err = r.OpenShort("click", tok)
	require.ErrorIs(t, err, token.ErrInvalidToken, "another purpose's domain")
	_, err = mustRing(t, "k3:third-secret-0123456789").OpenShort("bounce", tok)
	require.ErrorIs(t, err, token.ErrInvalidToken, "an unknown key")
}
