package bounce_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/bounce"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/token"
)

func TestVERPAddress(t *testing.T) {
	t.Parallel()
	keys, err := token.NewRing([]string{"k1:bounce-test-secret-0123456789"})
	require.NoError(t, err)
	v := bounce.NewVERP(keys)
	addr := v.Address(1<<34, 1<<40, "b.example.com")
	local, _, _ := strings.Cut(addr, "@")
	require.LessOrEqual(t, len(local), 64, "RFC 5321 §4.5.3.1.1: %s", local)
	require.Equal(t, strings.ToLower(addr), addr)
	for _, a := range []string{addr, strings.ToUpper(addr), "<" + addr + ">"} {
		acc, send, ours, ok := v.Open(a)
		require.True(t, ours && ok, a)
		require.Equal(t, int64(1<<34), acc)
		require.Equal(t, int64(1<<40), send)
	}
	_, _, ours, ok := v.Open(strings.Replace(addr, "bounces+a", "bounces+b", 1))
	require.True(t, ours)
	require.False(t, ok, "a changed token does not verify")
	_, _, ours, _ = v.Open("news@example.com")
	require.False(t, ours)
}

// An smtp sender with a bounce domain sends each send with its VERP
// Return-Path as MAIL FROM; without one, or for a message of no send, MAIL
// FROM is the From address.
func TestSenderBounceDomainSetsMailFrom(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	sk := sink.NewSMTP(sink.SMTPOptions{KeepMessages: true})
	addr, err := sk.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { sk.Close() })
	host, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	svc := sender.NewService(e.pool, e.ring, sender.WithGuard(egress.Guard{AllowPrivate: true}),
		sender.WithReturnPath(e.verp.Address))

	_, err = svc.Create(ctx, e.a, sender.Input{Name: "bad", Type: "smtp",
		Settings: sender.Settings{Host: host, Port: port, Security: "none", BounceDomain: "not a domain"}})
	var ae *apperr.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "/settings/bounce_domain", ae.Fields[0].Pointer)

	build := func(bounceDomain string) sender.Provider {
		sn, err := svc.Create(ctx, e.a, sender.Input{Name: "relay " + bounceDomain, Type: "smtp",
			Settings: sender.Settings{Host: host, Port: port, Security: "none", BounceDomain: bounceDomain}})
		require.NoError(t, err)
		row, err := store.New(e.pool).SenderGet(ctx, store.SenderGetParams{AccountID: e.a, ID: sn.ID})
		require.NoError(t, err)
		p, err := svc.Built(row)
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		return p
	}
	msg := func(id string, sendID int64) provider.Message {
		return provider.Message{JobID: id, MessageID: id + "@example.com", SendID: sendID, From: "news@shop.example",
			To: "r@example.net", Subject: "s", Text: "t"}
	}
	verp := build("bounces.shop.example")
	_, err = verp.Send(ctx, msg("a", 4242))
	require.NoError(t, err)
	_, err = verp.Send(ctx, msg("b", 0))
	require.NoError(t, err)
	_, err = build("").Send(ctx, msg("c", 4242))
	require.NoError(t, err)

	from := map[string]string{}
	for _, m := range sk.Messages() {
		from[m.MessageID] = m.From
	}
	require.Equal(t, e.verp.Address(e.a, 4242, "bounces.shop.example"), from["a@example.com"])
	acc, send, _, ok := e.verp.Open(from["a@example.com"])
	require.True(t, ok)
	require.Equal(t, [2]int64{e.a, 4242}, [2]int64{acc, send})
	require.Equal(t, "news@shop.example", from["b@example.com"], "no send, no VERP")
	require.Equal(t, "news@shop.example", from["c@example.com"], "no bounce domain, no VERP")
}
