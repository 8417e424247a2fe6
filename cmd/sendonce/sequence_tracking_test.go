package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/sink"
)

// A sequence's mail is click-tracked and has a working web view, end to end
// through the executor, a fake provider and the public routes: step 0 carries a
// link and a "view in browser" link; X follows the tracked link from the mail as
// delivered, Y does not; once both have passed a wait_for_event step, the
// condition "clicked step 0" ends X's enrollment and only Y gets the follow-up.
// The web-view address of a delivered step mail answers 200 with the body
// rendered for its recipient, the enrollment's event data included.
func TestServeSequenceClickedAndWebView(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	_, key, err := account.NewService(pool).Create(ctx, "acme")
	require.NoError(t, err)
	s := sink.NewHTTP(sink.HTTPOptions{KeepDeliveries: true})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	var publicURL string
	base := startService(t, pool.Config().ConnString(), func(cfg *config.Config) {
		cfg.Provider, cfg.HTTPProviderURL = "http", srv.URL
		cfg.Tick = 50 * time.Millisecond
		publicURL = cfg.PublicURL
	})
	call := func(method, path string, body any) map[string]any { return apiCall(t, base, key, method, path, body) }
	id := func(m map[string]any) string { return fmt.Sprint(int64(m["id"].(float64))) }

	offer := call("POST", "/v1/templates", map[string]any{"name": "offer", "subject": "An offer, {{.Name}}",
		"html": `<p>Order {{.Event.order}}: <a href="https://shop.example/offer">See the offer</a> · <a href="{{.WebViewURL}}">View in browser</a></p>`})
	nudge := call("POST", "/v1/templates", map[string]any{"name": "nudge", "subject": "Still thinking?",
		"html": `<p>The offer is still there.</p>`})
	seq := call("POST", "/v1/sequences", map[string]any{"name": "offer", "trigger": map[string]any{"type": "manual"},
		"steps": []any{
			map[string]any{"type": "send", "template_id": offer["id"], "from_email": "shop@example.com"},
			map[string]any{"type": "wait_for_event", "event": "checked", "timeout": "1d", "on_event": "continue", "on_timeout": "continue"},
			map[string]any{"type": "condition", "if": map[string]any{"clicked": map[string]any{"step": 0}}},
			map[string]any{"type": "send", "template_id": nudge["id"], "from_email": "shop@example.com"},
		}})
	seqID := id(seq)
	call("POST", "/v1/sequences/"+seqID+"/activate", nil)
	x := id(call("POST", "/v1/subscribers", map[string]any{"email": "x@example.com", "name": "Xena", "status": "confirmed"}))
	y := id(call("POST", "/v1/subscribers", map[string]any{"email": "y@example.com", "name": "Yves", "status": "confirmed"}))
	for _, email := range []string{"x@example.com", "y@example.com"} {
		call("POST", "/v1/sequences/"+seqID+"/enroll", map[string]any{"email": email, "data": map[string]any{"order": "A-7"}})
	}
	job := func(step int, sub string) string { return "sequence:" + seqID + ":" + fmt.Sprint(step) + ":" + sub }
	delivered := func(job string) string {
		d, ok := s.Deliveries()[job]
		if !ok {
			return ""
		}
		var p struct{ HTML string }
		require.NoError(t, json.Unmarshal(d.Body, &p))
		return p.HTML
	}
	require.Eventually(t, func() bool { return delivered(job(0, x)) != "" && delivered(job(0, y)) != "" },
		30*time.Second, 20*time.Millisecond, "step 0 reaches both")
	mail := delivered(job(0, x))
	require.NotContains(t, mail, "shop.example", "the step's link is a tracked redirect: %s", mail)
	clicks := regexp.MustCompile(`href="`+regexp.QuoteMeta(publicURL)+`(/c/[A-Za-z0-9_-]+)"`).FindAllStringSubmatch(mail, -1)
	require.Len(t, clicks, 2, "the link and the honeypot: %s", mail)

	// The web view of X's mail: the body as X got it (links as written).
	view := regexp.MustCompile(`href="` + regexp.QuoteMeta(publicURL) + `(/v/[A-Za-z0-9_-]+)"`).FindStringSubmatch(mail)
	require.NotNil(t, view, mail)
	resp, err := http.Get(base + view[1])
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", page)
	require.Contains(t, string(page), `href="https://shop.example/offer"`)
	require.Contains(t, string(page), "Order A-7")

	// A click within seconds of delivery counts as a gateway's; X's comes later.
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE job_id = $1 AND sent_at IS NOT NULL`, job(0, x)).Scan(&n))
		return n == 1
	}, 30*time.Second, 20*time.Millisecond)
	_, err = pool.Exec(ctx, `UPDATE sends SET sent_at = sent_at - interval '1 hour' WHERE job_id = $1`, job(0, x))
	require.NoError(t, err)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", base+clicks[0][1], nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")
	resp, err = noRedirect.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, "https://shop.example/offer", resp.Header.Get("Location"))
	require.Eventually(t, func() bool {
		events := call("GET", "/v1/events?type=send.clicked", nil)["data"].([]any)
		for _, e := range events {
			d := e.(map[string]any)["data"].(map[string]any)
			if fmt.Sprint(d["subscriber_id"]) == x && d["human"] == true {
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "X's click is recorded as a person's")

	for i, email := range []string{"x@example.com", "y@example.com"} {
		call("POST", "/v1/track", map[string]any{"event_id": fmt.Sprint("checked-", i), "name": "checked", "email": email})
	}
	state := func(email string) map[string]any {
		return call("GET", "/v1/sequences/"+seqID+"/enrollments?email="+email, nil)["data"].([]any)[0].(map[string]any)
	}
	require.Eventually(t, func() bool {
		return state("x@example.com")["state"] != "active" && delivered(job(3, y)) != ""
	}, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, "exited", state("x@example.com")["state"])
	require.Equal(t, "condition", state("x@example.com")["exit_reason"])
	require.Empty(t, delivered(job(3, x)), "X clicked: no follow-up")
	require.True(t, strings.Contains(delivered(job(3, y)), "still there"))
}
