package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/sink"
)

// The erasure proof: a person who got a campaign (and clicked and opened it), a
// transactional message, a sequence step, sent a tracked event, was suppressed and
// whose creation was stored for an Idempotency-Key replay is erased; then a
// data-only dump of the whole database holds the address nowhere — in any case,
// URL-encoded, or its local part alone — nor the name, an attribute's value, the
// message's data or the enrollment's data. Another person's data is still there.
// Then the address comes back through the API (a create, an import) and is
// suppressed, and a campaign to everybody does not reach it.
func TestServeErasureLeavesNoTrace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	acct, key, err := account.NewService(pool).Create(ctx, "erase")
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

	const email = "Zq.Erase-Proof+7731@Example.org"
	lower := strings.ToLower(email)
	secrets := []string{lower, url.QueryEscape(lower), url.PathEscape(lower), strings.ReplaceAll(lower, "@", "%40"),
		"zq.erase-proof", "vorlander", "zyxtown-4417", "order-zq-9931", "zq-coupon-5521", "zq-track-8812"}

	list := call("POST", "/v1/lists", map[string]any{"name": "News"})
	person := idempotentCall(t, base, key, "POST", "/v1/subscribers", "create-"+lower, map[string]any{
		"email": email, "name": "Quintessa Vorlander", "status": "confirmed",
		"attributes": map[string]any{"city": "Zyxtown-4417"}})
	personID := id(person)
	call("POST", "/v1/subscribers", map[string]any{"email": "keep@example.org", "name": "Kept Person", "status": "confirmed"})
	call("POST", "/v1/lists/"+id(list)+"/members", map[string]any{"subscriber_ids": []any{person["id"]}})

	// A campaign with a tracked link and the open pixel.
	camp := call("POST", "/v1/campaigns", map[string]any{"name": "Sale", "from_email": "news@example.com",
		"subject": "Sale for {{.Name}}", "html_template": `<p>Hi {{.Name}} <a href="https://shop.example/sale">Sale</a></p>`,
		"track_clicks": true, "track_opens": true})
	call("POST", "/v1/campaigns/"+id(camp)+"/approve", map[string]any{})
	campJob := "campaign:" + id(camp) + ":" + personID
	html := func(job string) string {
		d, ok := s.Deliveries()[job]
		if !ok {
			return ""
		}
		return string(d.Body)
	}
	require.Eventually(t, func() bool { return html(campJob) != "" }, 30*time.Second, 20*time.Millisecond)
	mail := strings.ReplaceAll(html(campJob), `\u0026`, "&")
	click := regexp.MustCompile(regexp.QuoteMeta(publicURL) + `(/c/[A-Za-z0-9_-]+)`).FindStringSubmatch(mail)
	open := regexp.MustCompile(regexp.QuoteMeta(publicURL) + `(/o/[A-Za-z0-9_-]+)`).FindStringSubmatch(mail)
	require.NotNil(t, click, mail)
	require.NotNil(t, open, mail)

	// A transactional message (its key names the address, as clients' keys do).
	msgKey := "receipt-" + lower
	idempotentCall(t, base, key, "POST", "/v1/messages", msgKey, map[string]any{"to": email, "to_name": "Quintessa Vorlander",
		"from": "shop@example.com", "subject": "Receipt for Quintessa Vorlander", "html": "<p>Order {{.Attributes.order}}</p>",
		"data": map[string]any{"order": "ORDER-ZQ-9931"}})

	// A sequence step, with enrollment data, and a tracked event.
	tpl := call("POST", "/v1/templates", map[string]any{"name": "welcome", "subject": "Welcome",
		"html": `<p>Coupon {{.Event.coupon}}</p>`})
	seq := call("POST", "/v1/sequences", map[string]any{"name": "welcome", "trigger": map[string]any{"type": "manual"},
		"steps": []any{map[string]any{"type": "send", "template_id": tpl["id"], "from_email": "shop@example.com"}}})
	call("POST", "/v1/sequences/"+id(seq)+"/activate", nil)
	call("POST", "/v1/sequences/"+id(seq)+"/enroll", map[string]any{"email": email, "data": map[string]any{"coupon": "ZQ-COUPON-5521"}})
	call("POST", "/v1/track", map[string]any{"event_id": "t-1", "name": "visited", "email": email,
		"data": map[string]any{"page": "zq-track-8812"}})
	seqJob := "sequence:" + id(seq) + ":0:" + personID

	// The recipient clicks (as a browser, some time after delivery) and opens.
	_, err = pool.Exec(ctx, `UPDATE sends SET sent_at = sent_at - interval '1 hour' WHERE job_id = $1`, campJob)
	require.NoError(t, err)
	for _, path := range []string{click[1], open[1]} {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	require.Eventually(t, func() bool {
		var hits, settled int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM tracking_hits`).Scan(&hits))
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE status NOT IN ('queued', 'sending')`).Scan(&settled))
		return hits >= 2 && html(seqJob) != "" && html("message:"+fmt.Sprint(acct.ID)+":"+msgKey) != "" && settled >= 4
	}, 30*time.Second, 50*time.Millisecond, "everything delivered, clicked and opened")
	call("POST", "/v1/suppressions", map[string]any{"email": email, "reason": "manual", "source": "support"})
	// Un-suppressed and suppressed again: the audit log names a suppression by its
	// address (the route's {email}), written as the caller spelled it.
	call("DELETE", "/v1/suppressions/"+url.PathEscape(strings.ToUpper(email)), nil)
	call("POST", "/v1/suppressions", map[string]any{"email": email, "reason": "manual", "source": "support"})

	before := dump(t, pool.Config().ConnString())
	for _, x := range secrets[:1] {
		require.Contains(t, before, x, "the fixture holds the person's data before the erasure")
	}

	erased := call("POST", "/v1/subscribers/"+personID+"/erase", nil)
	require.Equal(t, "completed", erased["status"])
	again := call("POST", "/v1/subscribers/"+personID+"/erase", nil)
	require.Equal(t, erased["id"], again["id"], "erasing again answers the same erasure")

	after := dump(t, pool.Config().ConnString())
	for _, x := range secrets {
		if i := strings.Index(after, x); i >= 0 {
			t.Fatalf("the dump still holds %q: …%s…", x, after[max(0, i-300):min(len(after), i+200)])
		}
	}
	require.Contains(t, after, "keep@example.org", "another person's data stays")

	// The address comes back: created, it is suppressed again (by address, so the
	// build and the claim see it); a campaign to everybody reaches only the other.
	back := call("POST", "/v1/subscribers", map[string]any{"email": email, "status": "confirmed"})
	suppressed := func() bool {
		for _, x := range call("GET", "/v1/suppressions", nil)["data"].([]any) {
			if x.(map[string]any)["email"] == lower {
				return x.(map[string]any)["reason"] == "erasure"
			}
		}
		return false
	}
	require.True(t, suppressed(), "a re-created address is suppressed")
	camp2 := call("POST", "/v1/campaigns", map[string]any{"name": "Again", "from_email": "news@example.com",
		"subject": "Again", "html_template": `<p>Again</p>`})
	call("POST", "/v1/campaigns/"+id(camp2)+"/approve", map[string]any{})
	require.Eventually(t, func() bool {
		return call("GET", "/v1/campaigns/"+id(camp2), nil)["status"] == "sent"
	}, 30*time.Second, 50*time.Millisecond)
	require.Empty(t, html("campaign:"+id(camp2)+":"+id(back)), "the re-created address is not sent to")

	// Erased again, then imported: suppressed again.
	call("POST", "/v1/subscribers/"+id(back)+"/erase", nil)
	require.False(t, suppressed())
	importCSV(t, base, key, "email,name\n"+email+",Q\n")
	require.True(t, suppressed(), "a re-imported address is suppressed")
}

// idempotentCall is apiCall with an Idempotency-Key.
func idempotentCall(t *testing.T, base, key, method, path, idemKey string, body any) map[string]any {
	t.Helper()
	var out map[string]any
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(method, base+path, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idemKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	require.Less(t, resp.StatusCode, 300, "%s %s: %s", method, path, raw)
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}

func importCSV(t *testing.T, base, key, body string) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/v1/subscribers/import", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "text/csv")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
}

// dump is `pg_dump --data-only` of the database at url, lower-cased, from the
// PostgreSQL binaries the test cluster runs on.
func dump(t *testing.T, url string) string {
	t.Helper()
	bin, err := pgcluster.BinDir()
	require.NoError(t, err)
	// initdb may be a link on the PATH into the server's folder, which has pg_dump.
	if real, err := filepath.EvalSymlinks(filepath.Join(bin, "initdb")); err == nil {
		bin = filepath.Dir(real)
	}
	out, err := exec.Command(filepath.Join(bin, "pg_dump"), "--data-only", "--no-owner", "-d", url).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("pg_dump: %v: %s", err, ee.Stderr)
	}
	require.NoError(t, err)
	return strings.ToLower(string(out))
}
