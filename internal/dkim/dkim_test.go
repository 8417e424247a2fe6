package dkim_test

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	msgdkim "github.com/emersion/go-msgauth/dkim"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/dkim"
	"github.com/sendonce/sendonce/internal/dnscheck"
	"github.com/sendonce/sendonce/internal/dnscheck/dnschecktest"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/store"
)

// fixture is an account with an smtp sender aimed at a go-smtp sink, and its
// DKIM key service.
type fixture struct {
	ctx     context.Context
	account int64
	keys    *dkim.Service
	sink    *sink.SMTP
	send    func(t *testing.T, m provider.Message)
	prov    provider.Provider
	pool    *pgxpool.Pool
}

func setup(t *testing.T, settings func(*sender.Settings)) fixture {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t)
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	ring, err := sender.ParseKeyRing([]string{sender.NewKeyRingEntry("k")})
	require.NoError(t, err)
	svc := sender.NewService(pool, ring, sender.WithGuard(egress.Guard{AllowPrivate: true}))
	svc.DKIM().CacheTTL = -1 // every message reads the active key (the rotation test)
	sk := sink.NewSMTP(sink.SMTPOptions{KeepMessages: true})
	addr, err := sk.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = sk.Close() })
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	st := sender.Settings{Host: host, Port: p, Security: "none"}
	if settings != nil {
		settings(&st)
	}
	sn, err := svc.Create(ctx, acc.ID, sender.Input{Name: "relay", Type: "smtp", Settings: st})
	require.NoError(t, err)
	row, err := store.New(pool).SenderGet(ctx, store.SenderGetParams{AccountID: acc.ID, ID: sn.ID})
	require.NoError(t, err)
	prov, err := svc.Built(row)
	require.NoError(t, err)
	t.Cleanup(func() { _ = prov.Close() })
	return fixture{ctx: ctx, account: acc.ID, keys: svc.DKIM(), sink: sk, prov: prov, pool: pool, send: func(t *testing.T, m provider.Message) {
		t.Helper()
		_, err := prov.Send(ctx, m)
		require.NoError(t, err)
	}}
}

// message is a campaign message From news.example.com, with the one-click pair.
func message(n int) provider.Message {
	id := "campaign:7:" + strconv.Itoa(n)
	return provider.Message{JobID: id, MessageID: "c7." + strconv.Itoa(n) + "@news.example.com",
		From: "hello@news.example.com", FromName: "News", To: "ann@example.net", Subject: "Spring sale — 20 % off",
		HTML: "<p>Hello Ann,</p>\n<p>our sale starts today.</p>\n", Text: "Hello Ann,\n\nour sale starts today.\n",
		Headers: []provider.Header{{Name: "List-Unsubscribe", Value: "<https://mail.example.com/u/tok" + strconv.Itoa(n) + ">"},
			{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"}}}
}

// zoneOf publishes keys in a loopback DNS zone (a long key split into strings of
// at most 255 characters, as a DNS provider writes it) and returns a lookup for
// the verifier that asks it.
func zoneOf(t *testing.T, keys ...dkim.KeyInfo) func(string) ([]string, error) {
	t.Helper()
	zone := map[string][]string{}
	for _, k := range keys {
		v := k.RecordValue
		var parts []string
		for len(v) > 255 {
			parts, v = append(parts, v[:255]), v[255:]
		}
		zone[k.RecordName+"."] = append(zone[k.RecordName+"."], strings.Join(append(parts, v), "|"))
	}
	r := dnscheck.NewResolver(dnschecktest.Serve(t, zone, nil))
	return func(name string) ([]string, error) { return r.LookupTXT(context.Background(), name) }
}

// verify returns the verifications of raw against lookup.
func verify(t *testing.T, raw []byte, lookup func(string) ([]string, error)) []*msgdkim.Verification {
	t.Helper()
	vs, err := msgdkim.VerifyWithOptions(bytes.NewReader(raw), &msgdkim.VerifyOptions{LookupTXT: lookup})
	require.NoError(t, err)
	return vs
}

func TestSignedMessageVerifies(t *testing.T) {
	t.Parallel()
	for _, alg := range dkim.Algorithms {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			f := setup(t, nil)
			k, err := f.keys.Create(f.ctx, f.account, "News.Example.com", "", alg)
			require.NoError(t, err)
			require.False(t, k.Active, "a new key signs nothing until activated")
			require.Equal(t, k.Selector+"._domainkey.news.example.com", k.RecordName)
			lookup := zoneOf(t, k)

			f.send(t, message(1))
			_, err = f.keys.Activate(f.ctx, f.account, "news.example.com", k.ID)
			require.NoError(t, err)
			f.send(t, message(2))
			msgs := f.sink.Messages()
			require.Len(t, msgs, 2)
			require.Empty(t, verify(t, msgs[0].Raw, lookup), "before activation the message is not signed")

			vs := verify(t, msgs[1].Raw, lookup)
			require.Len(t, vs, 1)
			require.NoError(t, vs[0].Err)
			require.Equal(t, "news.example.com", vs[0].Domain)
			signed := strings.ToLower(strings.Join(vs[0].HeaderKeys, ":"))
			for _, h := range []string{"from", "to", "subject", "date", "message-id", "mime-version", "content-type",
				"list-unsubscribe", "list-unsubscribe-post"} {
				require.Contains(t, strings.Split(signed, ":"), h)
			}
			require.Contains(t, string(msgs[1].Raw), "c=relaxed/relaxed")
			require.Contains(t, string(msgs[1].Raw), "s="+k.Selector+";")

			// A body changed on the way (one word) fails.
			tampered := bytes.Replace(msgs[1].Raw, []byte("sale starts today"), []byte("sale starts tomorrow"), 1)
			require.NotEqual(t, msgs[1].Raw, tampered)
			vs = verify(t, tampered, lookup)
			require.Len(t, vs, 1)
			require.Error(t, vs[0].Err, "a tampered body must not verify")
			// So does a changed List-Unsubscribe (it is signed).
			tampered = bytes.Replace(msgs[1].Raw, []byte("/u/tok2"), []byte("/u/evil"), 1)
			vs = verify(t, tampered, lookup)
			require.Error(t, vs[0].Err, "a changed List-Unsubscribe must not verify")
		})
	}
}

// TestRetrySignsAgain: a message sent twice (a retry under the same Message-ID)
// has a new Date and boundary, and each copy carries a signature of its own bytes.
func TestRetrySignsAgain(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	k, err := f.keys.Create(f.ctx, f.account, "news.example.com", "retry1", dkim.Ed25519)
	require.NoError(t, err)
	_, err = f.keys.Activate(f.ctx, f.account, "news.example.com", k.ID)
	require.NoError(t, err)
	lookup := zoneOf(t, k)
	f.send(t, message(1))
	f.send(t, message(1))
	msgs := f.sink.Messages()
	require.Len(t, msgs, 2)
	require.NotEqual(t, msgs[0].Raw, msgs[1].Raw)
	for _, m := range msgs {
		require.Equal(t, "<c7.1@news.example.com>", m.Header.Get("Message-ID"))
		vs := verify(t, m.Raw, lookup)
		require.Len(t, vs, 1)
		require.NoError(t, vs[0].Err)
	}
}

func TestRotation(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	old, err := f.keys.Create(f.ctx, f.account, "news.example.com", "old", "")
	require.NoError(t, err)
	require.Equal(t, dkim.RSA2048, old.Algorithm)
	_, err = f.keys.Activate(f.ctx, f.account, "news.example.com", old.ID)
	require.NoError(t, err)
	f.send(t, message(1))

	next, err := f.keys.Create(f.ctx, f.account, "news.example.com", "next", dkim.Ed25519)
	require.NoError(t, err)
	lookup := zoneOf(t, old, next) // both published during the rotation
	f.send(t, message(2))          // the new key is not active yet
	_, err = f.keys.Activate(f.ctx, f.account, "news.example.com", next.ID)
	require.NoError(t, err)
	f.send(t, message(3))

	msgs := f.sink.Messages()
	require.Len(t, msgs, 3)
	for i, want := range []string{"old", "old", "next"} {
		require.Contains(t, string(msgs[i].Raw), "s="+want+";", "message %d", i+1)
		vs := verify(t, msgs[i].Raw, lookup)
		require.Len(t, vs, 1)
		require.NoError(t, vs[0].Err, "message %d", i+1)
	}

	keys, err := f.keys.List(f.ctx, f.account, "news.example.com")
	require.NoError(t, err)
	require.Len(t, keys, 2)
	require.False(t, keys[0].Active, "the previous key stays, inactive")
	require.True(t, keys[1].Active)

	err = f.keys.Delete(f.ctx, f.account, "news.example.com", next.ID)
	require.ErrorContains(t, err, "active signing key")
	require.NoError(t, f.keys.Delete(f.ctx, f.account, "news.example.com", old.ID))
	keys, err = f.keys.List(f.ctx, f.account, "")
	require.NoError(t, err)
	require.Len(t, keys, 1)
}

// TestSenderOptsOut: dkim_sign false on the sender leaves its mail unsigned.
func TestSenderOptsOut(t *testing.T) {
	t.Parallel()
	off := false
	f := setup(t, func(s *sender.Settings) { s.DKIMSign = &off })
	k, err := f.keys.Create(f.ctx, f.account, "news.example.com", "s1", dkim.Ed25519)
	require.NoError(t, err)
	_, err = f.keys.Activate(f.ctx, f.account, "news.example.com", k.ID)
	require.NoError(t, err)
	f.send(t, message(1))
	require.NotContains(t, string(f.sink.Messages()[0].Raw), "DKIM-Signature")
}

func TestPublished(t *testing.T) {
	t.Parallel()
	_, pub, err := dkim.Generate(dkim.Ed25519)
	require.NoError(t, err)
	rec := dkim.TXTValue(dkim.Ed25519, pub)
	require.True(t, dkim.Published(rec, dkim.Ed25519, pub))
	require.True(t, dkim.Published("v=DKIM1;k=ed25519; p="+pub[:10]+" "+pub[10:], dkim.Ed25519, pub), "whitespace inside p= is ignored")
	require.False(t, dkim.Published(rec, dkim.RSA2048, pub), "another key type")
	require.False(t, dkim.Published("v=DKIM1; k=ed25519; p=", dkim.Ed25519, ""), "a revoked key")
	_, other, err := dkim.Generate(dkim.Ed25519)
	require.NoError(t, err)
	require.False(t, dkim.Published(dkim.TXTValue(dkim.Ed25519, other), dkim.Ed25519, pub))
}

// TestKeyRingRotation: a DKIM key sealed under an old SENDONCE_SECRETS_KEY entry
// is re-sealed by the rotation, after which the old entry can leave the ring;
// before it, a ring without that entry fails the start-up check.
func TestKeyRingRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	k1, k2 := sender.NewKeyRingEntry("k1"), sender.NewKeyRingEntry("k2")
	old, err := sender.ParseKeyRing([]string{k1})
	require.NoError(t, err)
	_, err = dkim.NewService(pool, old).Create(ctx, acc.ID, "news.example.com", "s1", dkim.Ed25519)
	require.NoError(t, err)
	onlyNew, err := sender.ParseKeyRing([]string{k2})
	require.NoError(t, err)
	require.ErrorContains(t, sender.CheckKeys(ctx, pool, onlyNew), "cannot decrypt 1 DKIM key")

	both, err := sender.ParseKeyRing([]string{k2, k1})
	require.NoError(t, err)
	n, err := dkim.Rotate(ctx, pool, both)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = dkim.Rotate(ctx, pool, both)
	require.NoError(t, err)
	require.Zero(t, n, "idempotent")
	require.NoError(t, sender.CheckKeys(ctx, pool, onlyNew))
}

// TestUnusableKeyFailsTheSend: a key the ring cannot decrypt fails the send as
// temporary (nothing handed over) and as the sender's configuration failure, so
// a run of them pauses the sender instead of sending unsigned mail.
func TestUnusableKeyFailsTheSend(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	k, err := f.keys.Create(f.ctx, f.account, "news.example.com", "s1", dkim.Ed25519)
	require.NoError(t, err)
	_, err = f.keys.Activate(f.ctx, f.account, "news.example.com", k.ID)
	require.NoError(t, err)
	_, err = f.pool.Exec(f.ctx, `UPDATE dkim_keys SET secret_key_id = 'gone' WHERE id = $1`, k.ID)
	require.NoError(t, err)
	_, err = f.prov.Send(f.ctx, message(1))
	pe, ok := provider.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, provider.Temporary, pe.Class)
	require.True(t, pe.Config)
	require.Empty(t, f.sink.Messages())
}
