package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/sink"
)

// The real service, end to end: a campaign's message carries signed click links
// in place of its literal link; following one answers the stored URL, and the
// flusher run by serve writes a human send.clicked event for it; the same for a
// single message that asks for click tracking.
func TestServeTrackedCampaignClick(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	_, key, err := account.NewService(pool).Create(ctx, "acme")
	require.NoError(t, err)
	s := sink.NewHTTP(sink.HTTPOptions{KeepDeliveries: true})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := config.Default()
	cfg.DatabaseURL = pool.Config().ConnString()
	cfg.Addr = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	cfg.Provider, cfg.HTTPProviderURL = "http", srv.URL
	cfg.Tick = 50 * time.Millisecond
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
	api := func(method, path, body string) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		require.Less(t, resp.StatusCode, 300, "%s %s: %s", method, path, b)
		return b
	}
	api("POST", "/v1/subscribers", `{"email":"ada@example.com","status":"confirmed"}`)
	var c struct{ ID int64 }
	require.NoError(t, json.Unmarshal(api("POST", "/v1/campaigns", `{"name":"n","subject":"s","from_email":"news@example.com",
		"html_template":"<p><a href=\"https://shop.example/sale\">Sale</a> <a href=\"{{.WebViewURL}}\">web</a></p>"}`), &c))
	api("POST", "/v1/campaigns/"+strconv.FormatInt(c.ID, 10)+"/approve", `{}`)

	var html string
	require.Eventually(t, func() bool {
		for _, d := range s.Deliveries() {
			var p struct{ HTML string }
			if json.NewDecoder(bytes.NewReader(d.Body)).Decode(&p) == nil {
				html = p.HTML
			}
		}
		return html != ""
	}, 30*time.Second, 20*time.Millisecond)
	require.NotContains(t, html, "shop.example")
	links := regexp.MustCompile(`href="`+regexp.QuoteMeta(cfg.PublicURL)+`(/c/[A-Za-z0-9_-]+)"`).FindAllStringSubmatch(html, -1)
	require.Len(t, links, 2, "the link and the honeypot: %s", html)

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", base+links[0][1], nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, "https://shop.example/sale", resp.Header.Get("Location"))

	view := regexp.MustCompile(`href="` + regexp.QuoteMeta(cfg.PublicURL) + `(/v/[A-Za-z0-9_-]+)"`).FindStringSubmatch(html)
	require.NotNil(t, view)
	resp, err = http.Get(base + view[1])
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(page), `href="https://shop.example/sale"`)

	// The hit is delivery-fresh (the message left seconds ago), so it is flagged;
	// what matters here is that serve's flusher writes it, with its event.
	require.Eventually(t, func() bool {
		return strings.Contains(string(api("GET", "/v1/events?type=send.clicked", "")), `"url":"https://shop.example/sale"`)
	}, 30*time.Second, 50*time.Millisecond)

	// A single message asking for click tracking: serve's message builder signs
	// message click links; the redirect answers the message's stored URL and the
	// hit's event names the message.
	req, _ = http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"to":"bob@example.com",
		"from":"shop@example.com","subject":"Order","html":"<a href=\"https://shop.example/order/7\">Your order</a>",
		"track_clicks":true}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "order-7")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var msg struct{ ID int64 }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	var msgHTML string
	require.Eventually(t, func() bool {
		for _, d := range s.Deliveries() {
			var p struct{ HTML string }
			if json.NewDecoder(bytes.NewReader(d.Body)).Decode(&p) == nil && strings.Contains(p.HTML, "Your order") {
				msgHTML = p.HTML
			}
		}
		return msgHTML != ""
	}, 30*time.Second, 20*time.Millisecond)
	require.NotContains(t, msgHTML, "shop.example")
	links = regexp.MustCompile(`href="`+regexp.QuoteMeta(cfg.PublicURL)+`(/c/[A-Za-z0-9_-]+)"`).FindAllStringSubmatch(msgHTML, -1)
	require.Len(t, links, 2, "the link and the honeypot: %s", msgHTML)
	req, _ = http.NewRequest("GET", base+links[0][1], nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")
	resp, err = noRedirect.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, "https://shop.example/order/7", resp.Header.Get("Location"))
	require.Eventually(t, func() bool {
		return strings.Contains(string(api("GET", "/v1/events?type=send.clicked", "")),
			`"message_id":`+strconv.FormatInt(msg.ID, 10))
	}, 30*time.Second, 50*time.Millisecond)

	resp, err = http.Get(base + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(metrics), "sendonce_tracking_hits_held ")
	require.Contains(t, string(metrics), "sendonce_tracking_hits_dropped_total 0")
}
