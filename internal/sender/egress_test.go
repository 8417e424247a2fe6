package sender_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/store"
)

// TestCiphertextMovedToAnotherSenderDoesNotDecrypt: stored credentials are bound
// to their sender, not only to the account: a ciphertext copied onto another
// sender row of the same account (a repointed sender's, say) does not decrypt there.
func TestCiphertextMovedToAnotherSenderDoesNotDecrypt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	ring, err := sender.ParseKeyRing([]string{sender.NewKeyRingEntry("k")})
	require.NoError(t, err)
	svc := sender.NewService(pool, ring)
	victim, err := svc.Create(ctx, acc.ID, sender.Input{Name: "pm", Type: "postmark",
		Credentials: &sender.Credentials{ServerToken: "pm-token-0123456789"}})
	require.NoError(t, err)
	thief, err := svc.Create(ctx, acc.ID, sender.Input{Name: "pm2", Type: "postmark",
		Settings: sender.Settings{Endpoint: "https://collector.example.net"}, Credentials: &sender.Credentials{ServerToken: "other-0123456789"}})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE senders t SET secret = v.secret, secret_key_id = v.secret_key_id
		FROM senders v WHERE v.id = $1 AND t.id = $2`, victim.ID, thief.ID)
	require.NoError(t, err)

	q := store.New(pool)
	row, err := q.SenderGet(ctx, store.SenderGetParams{AccountID: acc.ID, ID: thief.ID})
	require.NoError(t, err)
	_, err = svc.Built(row)
	require.Error(t, err, "the moved ciphertext must not decrypt on another sender")
	require.ErrorContains(t, sender.CheckKeys(ctx, pool, ring), "cannot decrypt the credentials of 1 sender")
	row, err = q.SenderGet(ctx, store.SenderGetParams{AccountID: acc.ID, ID: victim.ID})
	require.NoError(t, err)
	p, err := svc.Built(row)
	require.NoError(t, err, "in its own row it still decrypts")
	p.Close()
}

// TestBuiltSenderRefusesLoopback: a sender whose destination is internal (saved
// while allowed, or a name resolving inward) is refused when it connects: an http
// sender's POST to a loopback listener never arrives, and the refusal counts
// against the sender's configuration rather than failing the recipient.
func TestBuiltSenderRefusesLoopback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, `{"id":"x"}`)
	}))
	t.Cleanup(srv.Close)
	svc := sender.NewService(pool, nil)
	sn, err := svc.Create(ctx, acc.ID, sender.Input{Name: "h", Type: "http", Settings: sender.Settings{URL: "https://mail.example.com/send"}})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE senders SET settings = jsonb_build_object('url', $1::text) WHERE id = $2`, srv.URL+"/send", sn.ID)
	require.NoError(t, err)
	row, err := store.New(pool).SenderGet(ctx, store.SenderGetParams{AccountID: acc.ID, ID: sn.ID})
	require.NoError(t, err)
	p, err := svc.Built(row)
	require.NoError(t, err)
	defer p.Close()
	_, err = p.Send(ctx, provider.Message{JobID: "campaign:1:2", From: "a@example.com", To: "b@example.com", Subject: "s", Text: "t"})
	require.Error(t, err)
	e, ok := provider.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, provider.Temporary, e.Class)
	require.True(t, e.Config)
	require.Zero(t, hits.Load(), "nothing reached the loopback listener")

	// The development switch (SENDONCE_EVENT_ALLOW_PRIVATE) lets the same sender through.
	dev := sender.NewService(pool, nil, sender.WithGuard(egress.Guard{AllowPrivate: true}))
	p2, err := dev.Built(row)
	require.NoError(t, err)
	defer p2.Close()
	_, err = p2.Send(ctx, provider.Message{JobID: "campaign:1:2", From: "a@example.com", To: "b@example.com", Subject: "s", Text: "t"})
	require.NoError(t, err)
	require.EqualValues(t, 1, hits.Load())
}

// TestStoredURLPasswordIsRedacted: a URL saved with a password before userinfo
// was refused comes back with the password hidden.
func TestStoredURLPasswordIsRedacted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	svc := sender.NewService(pool, nil)
	sn, err := svc.Create(ctx, acc.ID, sender.Input{Name: "h", Type: "http", Settings: sender.Settings{URL: "https://mail.example.com/send"}})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE senders SET settings = '{"url":"https://app:PASS@mail.example.com/send"}' WHERE id = $1`, sn.ID)
	require.NoError(t, err)
	got, err := svc.Get(ctx, acc.ID, sn.ID)
	require.NoError(t, err)
	require.Equal(t, "https://app:xxxxx@mail.example.com/send", got.Settings.URL)
}

// TestLegacyCiphertextStillReadAndReboundByRotate: credentials sealed before they
// were bound to their sender (account-only) still decrypt, and rotate-secrets
// re-seals them bound to the sender even when their key is already the first.
func TestLegacyCiphertextStillReadAndReboundByRotate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	ring, err := sender.ParseKeyRing([]string{sender.NewKeyRingEntry("k")})
	require.NoError(t, err)
	svc := sender.NewService(pool, ring)
	sn, err := svc.Create(ctx, acc.ID, sender.Input{Name: "pm", Type: "postmark",
		Credentials: &sender.Credentials{ServerToken: "placeholder-0123456789"}})
	require.NoError(t, err)
	keyID, legacy, err := ring.Seal([]byte(`{"server_token":"legacy-token-0123456789"}`),
		[]byte("sendonce.sender.v1:"+strconv.FormatInt(acc.ID, 10)))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE senders SET secret_key_id = $1, secret = $2 WHERE id = $3`, keyID, legacy, sn.ID)
	require.NoError(t, err)
	require.NoError(t, sender.CheckKeys(ctx, pool, ring), "the legacy form still decrypts")

	n, err := sender.Rotate(ctx, pool, ring)
	require.NoError(t, err)
	require.Equal(t, 1, n, "re-sealed bound to the sender")
	n, err = sender.Rotate(ctx, pool, ring)
	require.NoError(t, err)
	require.Zero(t, n)
	var stored []byte
	require.NoError(t, pool.QueryRow(ctx, `SELECT secret FROM senders WHERE id = $1`, sn.ID).Scan(&stored))
	_, err = ring.Open("k", stored, []byte("sendonce.sender.v1:"+strconv.FormatInt(acc.ID, 10)))
	require.Error(t, err, "no longer in the account-only form")
	require.NoError(t, sender.CheckKeys(ctx, pool, ring))
}
