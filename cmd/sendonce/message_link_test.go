package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// The real service, end to end: a marketing message whose id equals a
// subscriber's (3) carries a List-Unsubscribe link that, posted, suppresses the
// message's address and leaves the subscriber with that id alone.
func TestServeMessageLinkNamesTheMessagesAddress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	acc, key, err := account.NewService(pool).Create(ctx, "acme")
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `SELECT setval(pg_get_serial_sequence('subscribers', 'id'), 2),
		setval(pg_get_serial_sequence('messages', 'id'), 2)`)
	require.NoError(t, err)
	subscriberID := testfactory.New(pool).Subscriber(t, acc.ID, testfactory.Subscriber{Email: "ada@example.com",
		Status: "confirmed"})

	s := sink.NewHTTP(sink.HTTPOptions{KeepDeliveries: true})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := config.Default()
	cfg.DatabaseURL = pool.Config().ConnString()
	cfg.Addr = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	cfg.Provider, cfg.HTTPProviderURL = "http", srv.URL
	cfg.MessageSweep = 50 * time.Millisecond
	cfg.UnsubscribeSecret = []string{"k1:the-secret-0123456789abcdef"}
	runCtx, cancel := context.WithCancel(ctx)
	addrc, done := make(chan net.Addr, 1), make(chan error, 1)
	go func() {
		done <- run(runCtx, cfg, Options{API: true, Executor: true, OnListen: func(a net.Addr) { addrc <- a }},
			testWriter{t}, testWriter{t})
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

	body := `{"to":"zed@example.com","from":"shop@example.com","subject":"Offer","text":"Hi","category":"marketing"}`
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "offer-1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var m struct{ ID int64 }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Equal(t, subscriberID, m.ID, "the message's id equals the subscriber's")

	var link string
	require.Eventually(t, func() bool {
		for _, d := range s.Deliveries() {
			var p struct{ Headers map[string]string }
			if json.NewDecoder(bytes.NewReader(d.Body)).Decode(&p) == nil {
				link = strings.Trim(strings.SplitN(p.Headers["List-Unsubscribe"], ",", 2)[0], "<> ")
			}
		}
		return link != ""
	}, 30*time.Second, 20*time.Millisecond)
	require.True(t, strings.HasPrefix(link, cfg.PublicURL+"/u/"), link)
	link = base + strings.TrimPrefix(link, cfg.PublicURL)
	resp, err = http.Post(link, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var suppressed []string
	rows, err := pool.Query(ctx, `SELECT email_lower FROM suppressions WHERE account_id = $1`, acc.ID)
	require.NoError(t, err)
	for rows.Next() {
		var e string
		require.NoError(t, rows.Scan(&e))
		suppressed = append(suppressed, e)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"zed@example.com"}, suppressed, "the message's address, not subscriber 3's")
}
