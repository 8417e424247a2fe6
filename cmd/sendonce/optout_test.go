package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// TestServeOneClickUnsubscribe runs the real service with SENDONCE_UNSUBSCRIBE_SECRET
// set and checks the criterion: a POST of List-Unsubscribe=One-Click to the
// link suppresses the address; a token signed with a wrong key answers 404.
func TestServeOneClickUnsubscribe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	acc, _, err := account.NewService(pool).Create(ctx, "acme")
	require.NoError(t, err)
	fx := testfactory.New(pool)
	subscriberID := fx.Subscriber(t, acc.ID, testfactory.Subscriber{Email: "ada@example.com", Status: "confirmed"})
	campaignID := fx.Campaign(t, acc.ID, testfactory.Campaign{FromEmail: "news@example.com"})

	cfg := config.Default()
	cfg.DatabaseURL = pool.Config().ConnString()
	cfg.Addr = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	cfg.UnsubscribeSecret = []string{"k2:the-new-secret-0123456789", "k1:the-old-secret-0123456789"}
	runCtx, cancel := context.WithCancel(ctx)
	addrc, done := make(chan net.Addr, 1), make(chan error, 1)
	go func() {
		done <- run(runCtx, cfg, Options{API: true, OnListen: func(a net.Addr) { addrc <- a }}, testWriter{t}, testWriter{t})
	}()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a.String()
	case err := <-done:
		t.Fatalf("run returned early: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("service did not listen within 30s")
	}

	oneClick := func(signer *unsubscribe.Signer) int {
		link, _ := signer.Links(base, "")(acc.ID, campaignID, subscriberID)
		resp, err := http.Post(link, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	wrongKeys, err := token.NewRing([]string{"k1:not-the-configured-secret"})
	require.NoError(t, err)
	wrong := unsubscribe.NewSigner(wrongKeys)
	require.Equal(t, http.StatusNotFound, oneClick(wrong))
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM suppressions`).Scan(&n))
	require.Zero(t, n)

	// A link from an older message, signed with the rotated-out key k1, still works.
	oldKeys, err := token.NewRing([]string{"k1:the-old-secret-0123456789"})
	require.NoError(t, err)
	old := unsubscribe.NewSigner(oldKeys)
	require.Equal(t, http.StatusOK, oneClick(old))
	var reason string
	require.NoError(t, pool.QueryRow(ctx, `SELECT reason FROM suppressions WHERE account_id = $1 AND email_lower = 'ada@example.com'`,
		acc.ID).Scan(&reason))
	require.Equal(t, "unsubscribe", reason)
}
