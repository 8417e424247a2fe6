package sender_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/sender"
)

func TestParseKeyRing(t *testing.T) {
	t.Parallel()
	good := sender.NewKeyRingEntry("k1")
	for _, bad := range []string{"nocolon", ":" + good[3:], "k1:not-base64!", "k1:AAAA", good + "," + good} {
		_, err := sender.ParseKeyRing([]string{bad})
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "SENDONCE_SECRETS_KEY")
	}
	r, err := sender.ParseKeyRing([]string{sender.NewKeyRingEntry("new") + "," + good})
	require.NoError(t, err)
	require.Equal(t, "new", r.First())
	empty, err := sender.ParseKeyRing(nil)
	require.NoError(t, err)
	require.True(t, empty.Empty())
	_, _, err = empty.Seal([]byte("x"), nil)
	require.Error(t, err)
}

func TestKeyRingSealOpen(t *testing.T) {
	t.Parallel()
	old := sender.NewKeyRingEntry("old")
	r1, err := sender.ParseKeyRing([]string{old})
	require.NoError(t, err)
	id, sealed, err := r1.Seal([]byte("s3cret-value"), []byte("aad-1"))
	require.NoError(t, err)
	require.Equal(t, "old", id)
	require.False(t, bytes.Contains(sealed, []byte("s3cret-value")))
	// Another ring whose first key is new still opens what the old key sealed.
	r2, err := sender.ParseKeyRing([]string{sender.NewKeyRingEntry("new"), old})
	require.NoError(t, err)
	pt, err := r2.Open(id, sealed, []byte("aad-1"))
	require.NoError(t, err)
	require.Equal(t, "s3cret-value", string(pt))
	// Bound to its owner: another aad does not open it.
	_, err = r2.Open(id, sealed, []byte("aad-2"))
	require.Error(t, err)
	// Same id, other key material: refused, not garbage.
	r3, err := sender.ParseKeyRing([]string{sender.NewKeyRingEntry("old")})
	require.NoError(t, err)
	_, err = r3.Open(id, sealed, []byte("aad-1"))
	require.ErrorContains(t, err, "does not decrypt")
	// Tampered ciphertext.
	sealed[len(sealed)-1] ^= 1
	_, err = r1.Open(id, sealed, []byte("aad-1"))
	require.Error(t, err)
}

// TestCredentialsAtRest: the database holds ciphertext, never the secret; reads
// return only the hint; rotation re-encrypts under the new first key, after which
// the old key can leave the ring; a ring that cannot decrypt fails CheckKeys.
func TestCredentialsAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	old := sender.NewKeyRingEntry("old")
	ring, err := sender.ParseKeyRing([]string{old})
	require.NoError(t, err)
	svc := sender.NewService(pool, ring)
	const token = "pm-server-token-0123456789abcdef"
	sn, err := svc.Create(ctx, acc.ID, sender.Input{Name: "pm", Type: "postmark",
		Credentials: &sender.Credentials{ServerToken: token}})
	require.NoError(t, err)
	require.Equal(t, "…cdef", sn.CredentialsHint)
	require.False(t, sn.Idempotent)

	var keyID string
	var stored []byte
	require.NoError(t, pool.QueryRow(ctx, `SELECT secret_key_id, secret FROM senders WHERE id = $1`, sn.ID).Scan(&keyID, &stored))
	require.Equal(t, "old", keyID)
	require.False(t, bytes.Contains(stored, []byte(token)))
	require.False(t, bytes.Contains(stored, []byte("cdef01")))
	var anywhere bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM senders s WHERE s::text LIKE '%' || $1 || '%')`, token).Scan(&anywhere))
	require.False(t, anywhere)

	// Rotation: new key first, old kept to decrypt.
	newEntry := sender.NewKeyRingEntry("new")
	ring2, err := sender.ParseKeyRing([]string{newEntry, old})
	require.NoError(t, err)
	n, err := sender.Rotate(ctx, pool, ring2)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	var stored2 []byte
	require.NoError(t, pool.QueryRow(ctx, `SELECT secret_key_id, secret FROM senders WHERE id = $1`, sn.ID).Scan(&keyID, &stored2))
	require.Equal(t, "new", keyID)
	require.NotEqual(t, stored, stored2)
	n, err = sender.Rotate(ctx, pool, ring2)
	require.NoError(t, err)
	require.Zero(t, n, "a second run has nothing to do")

	// The new key alone now decrypts everything; the old key alone does not.
	newOnly, err := sender.ParseKeyRing([]string{newEntry})
	require.NoError(t, err)
	require.NoError(t, sender.CheckKeys(ctx, pool, newOnly))
	oldOnly, err := sender.ParseKeyRing([]string{old})
	require.NoError(t, err)
	err = sender.CheckKeys(ctx, pool, oldOnly)
	require.ErrorContains(t, err, "cannot decrypt the credentials of 1 sender")
	require.ErrorContains(t, err, `"new" is not in SENDONCE_SECRETS_KEY`)

	row, err := svc.Get(ctx, acc.ID, sn.ID)
	require.NoError(t, err)
	require.Equal(t, "…cdef", row.CredentialsHint)
}

func TestSenderValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	ring, _ := sender.ParseKeyRing([]string{sender.NewKeyRingEntry("k")})
	svc := sender.NewService(pool, ring)
	cases := []struct {
		in      sender.Input
		pointer string
	}{
		{sender.Input{Name: "x", Type: "pigeon"}, "/type"},
		{sender.Input{Name: "", Type: "resend", Credentials: &sender.Credentials{APIKey: "k"}}, "/name"},
		{sender.Input{Name: "x", Type: "resend"}, "/credentials/api_key"},
		{sender.Input{Name: "x", Type: "resend", Credentials: &sender.Credentials{APIKey: "k", Password: "p"}}, "/credentials/password"},
		{sender.Input{Name: "x", Type: "resend", Settings: sender.Settings{Host: "h"}, Credentials: &sender.Credentials{APIKey: "k"}}, "/settings/host"},
		{sender.Input{Name: "x", Type: "smtp", Settings: sender.Settings{Host: "h"}}, "/settings/port"},
		{sender.Input{Name: "x", Type: "smtp", Settings: sender.Settings{Host: "h", Port: 25, Security: "maybe"}}, "/settings/security"},
		{sender.Input{Name: "x", Type: "http", Settings: sender.Settings{URL: "ftp://x"}}, "/settings/url"},
		{sender.Input{Name: "x", Type: "mailgun", Credentials: &sender.Credentials{APIKey: "k"}}, "/settings/domain"},
		{sender.Input{Name: "x", Type: "ses", Credentials: &sender.Credentials{AccessKeyID: "a", SecretAccessKey: "b"}}, "/settings/region"},
		{sender.Input{Name: "x", Type: "ses", Settings: sender.Settings{Region: "us-east-1"}, Credentials: &sender.Credentials{AccessKeyID: "a"}}, "/credentials/secret_access_key"},
		{sender.Input{Name: "x", Type: "http", Settings: sender.Settings{URL: "https://x"}, RatePerSecond: -1}, "/rate_per_second"},
		{sender.Input{Name: "x", Type: "http", Settings: sender.Settings{URL: "https://x"}, AllowedFrom: []string{"not an address"}}, "/allowed_from/0"},
		{sender.Input{Name: "x\x00", Type: "http", Settings: sender.Settings{URL: "https://x"}}, "/name"},
		{sender.Input{Name: "x", Type: "http", Settings: sender.Settings{URL: "https://x"}, Credentials: &sender.Credentials{Authorization: "Bearer a\r\nX-Evil: 1"}}, "/credentials/authorization"},
	}
	for _, c := range cases {
		_, err := svc.Create(ctx, acc.ID, c.in)
		require.True(t, apperr.Is(err, apperr.Invalid), "%+v: %v", c.in, err)
		var ae *apperr.Error
		require.ErrorAs(t, err, &ae)
		require.Contains(t, fmt.Sprint(ae.Fields), c.pointer, "%+v", c.in)
	}
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM senders`).Scan(&n))
	require.Zero(t, n, "refused input changes nothing")

	// One default per account: a new default takes the flag.
	a, err := svc.Create(ctx, acc.ID, sender.Input{Name: "a", Type: "http", Settings: sender.Settings{URL: "https://a.example"}, Default: true})
	require.NoError(t, err)
	b, err := svc.Create(ctx, acc.ID, sender.Input{Name: "b", Type: "http", Settings: sender.Settings{URL: "https://b.example"}, Default: true})
	require.NoError(t, err)
	a, err = svc.Get(ctx, acc.ID, a.ID)
	require.NoError(t, err)
	require.False(t, a.Default)
	require.True(t, b.Default)
	require.True(t, b.Idempotent)
}
