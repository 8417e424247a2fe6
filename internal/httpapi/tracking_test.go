package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/tracking"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

const firefox = "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"

// TestTrackingRoutes walks what a recipient reaches from a tracked campaign: the
// redirect answers the stored URL whatever the request carries, refuses tampered
// and other accounts' tokens with a bare 404, records HEAD as a bot; the pixel is
// a GIF; the stats count human and total, per link, for the owner only; the web
// view and the archive are strict-CSP pages, the archive without recipient data.
func TestTrackingRoutes(t *testing.T) {
	t.Parallel()
	keys, err := token.NewRing([]string{"k1:0123456789abcdef0123456789abcdef"})
	require.NoError(t, err)
	signer := unsubscribe.NewSigner(keys)
	tokens := tracking.NewTokens(keys, "https://mail.example.com")
	var svc *tracking.Service
	e := setupDeps(t, func(d *httpapi.Deps) {
		d.Unsubscribe = unsubscribe.NewService(d.Pool, signer)
		svc = tracking.New(d.Pool, tokens, tracking.Config{}, nil)
		d.Tracking = tracking.API{Service: svc}
	}, func(c *config.Config) { c.PublicURL = "https://mail.example.com" })
	ctx := context.Background()
	a := e.keyA
	res := e.do(a, "POST", "/v1/subscribers", map[string]any{"email": "ann@example.org", "name": "Ann Private",
		"status": "confirmed", "attributes": map[string]any{"city": "Lyon"}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	sub := decodeAs[api.Subscriber](t, res)
	res = e.do(a, "POST", "/v1/lists", map[string]any{"name": "news"})
	require.Equal(t, http.StatusCreated, res.Status)
	list := decodeAs[api.List](t, res)
	res = e.do(a, "POST", "/v1/lists/"+itoa(list.Id)+"/members", map[string]any{"subscriber_ids": []int64{sub.Id}})
	require.Equal(t, http.StatusOK, res.Status)
	res = e.do(a, "POST", "/v1/campaigns", map[string]any{"name": "dec", "from_email": "news@example.com",
		"subject":       "Hi {{if .Archive}}reader{{else}}{{.Name}}{{end}}",
		"html_template": `<p>Dear {{.Name}} from {{.Attributes.city}}</p><a href="https://shop.example/sale">Sale</a> <a href="{{.WebViewURL}}">web</a> <a href="{{.UnsubscribeURL}}">unsub</a><script>alert(1)</script>`,
		"list_ids":      []int64{list.Id}, "archive": true, "track_opens": true})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	camp := decodeAs[api.Campaign](t, res)
	require.True(t, camp.TrackClicks && camp.TrackOpens && camp.Archive)
	res = e.do(a, "POST", "/v1/campaigns/"+itoa(camp.Id)+"/approve", map[string]any{})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))

	var accountA, sendID int64
	var publicA, publicB string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT account_id FROM campaigns WHERE id = $1`, camp.Id).Scan(&accountA))
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT public_id FROM accounts WHERE id = $1`, accountA).Scan(&publicA))
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT public_id FROM accounts WHERE id <> $1`, accountA).Scan(&publicB))
	// The executor's part, by hand: the campaign went out an hour ago.
	_, err = e.pool.Exec(ctx, `UPDATE campaigns SET status = 'sent', started_at = now() - interval '1 hour' WHERE id = $1`, camp.Id)
	require.NoError(t, err)
	sentAt := time.Now().Add(-time.Hour)
	sendID = testfactory.New(e.pool).Send(t, accountA, camp.Id, sub.Id, testfactory.Send{Email: "ann@example.org", Status: "sent",
		SentAt: &sentAt})
	send := tracking.Send{AccountID: accountA, CampaignID: camp.Id, SendID: sendID}
	click := tokens.ClickToken(tracking.Click{Send: send, Link: 1, Links: 1})

	res = e.do("", "GET", "/c/"+click+"?url=https://evil.example/&to=https://evil.example/", nil, "User-Agent", firefox)
	require.Equal(t, http.StatusFound, res.Status)
	require.Equal(t, "https://shop.example/sale", res.Header.Get("Location"))
	// HEAD is answered on every GET route (RFC 9110), outside the spec's list.
	head := httptest.NewRequest("HEAD", "/c/"+click, nil)
	head.Header.Set("User-Agent", firefox)
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, head)
	require.Equal(t, http.StatusFound, rec.Code)
	require.Equal(t, "https://shop.example/sale", rec.Header().Get("Location"))
	for name, tok := range map[string]string{
		"tampered":      click[:len(click)-3] + "AAA",
		"truncated":     click[:len(click)/2],
		"other account": tokens.ClickToken(tracking.Click{Send: tracking.Send{AccountID: accountA + 1000, CampaignID: camp.Id, SendID: sendID}, Link: 1, Links: 1}),
		"other signer": func() string {
			s2, _ := token.NewRing([]string{"k1:ffffffffffffffffffffffffffffffff"})
			return tracking.NewTokens(s2, "").ClickToken(tracking.Click{Send: send, Link: 1, Links: 1})
		}(),
		"open token": tokens.OpenToken(send),
	} {
		res := e.do("", "GET", "/c/"+tok, nil)
		require.Equal(t, http.StatusNotFound, res.Status, name)
		require.Empty(t, res.Header.Get("Location"), name)
		require.Empty(t, res.Body, name)
	}
	res = e.do("", "GET", "/o/"+tokens.OpenToken(send), nil, "User-Agent", "Mozilla/5.0")
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, "image/gif", res.Header.Get("Content-Type"))
	require.True(t, strings.HasPrefix(string(res.Body), "GIF89a"))
	require.Equal(t, http.StatusNotFound, e.do("", "GET", "/o/"+click, nil).Status)

	n, err := svc.Flush(ctx, true)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	res = e.do(a, "GET", "/v1/campaigns/"+itoa(camp.Id)+"/clicks", nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	clicks := decodeAs[api.CampaignClicks](t, res)
	require.Equal(t, []api.LinkClicks{{Index: 1, Url: "https://shop.example/sale", Total: 2, Unique: 1, Human: 1, UniqueHuman: 1}}, clicks.Links)
	require.Equal(t, api.Engagement{Clicks: 2, UniqueClicks: 1, HumanClicks: 1, UniqueHumanClicks: 1, Opens: 1, UniqueOpens: 1}, clicks.Engagement)
	res = e.do(a, "GET", "/v1/campaigns/"+itoa(camp.Id)+"/stats", nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, clicks.Engagement, decodeAs[api.CampaignStats](t, res).Engagement)
	require.Equal(t, http.StatusNotFound, e.do(e.keyB, "GET", "/v1/campaigns/"+itoa(camp.Id)+"/clicks", nil).Status)
	var humanEvents int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE type = 'send.clicked' AND (data->>'human')::bool
		AND data->>'url' = 'https://shop.example/sale' AND account_id = $1`, accountA).Scan(&humanEvents))
	require.Equal(t, 1, humanEvents, "one event per human click")

	// The web view: the recipient's rendering, strict CSP.
	view := tokens.ViewToken(send)
	res = e.do("", "GET", "/v/"+view, nil)
	require.Equal(t, http.StatusOK, res.Status)
	requireStrictCSP(t, res)
	require.Contains(t, string(res.Body), "Dear Ann Private from Lyon")
	require.Contains(t, string(res.Body), `href="https://shop.example/sale"`, "the web view is not tracked")
	require.Contains(t, string(res.Body), `href="https://mail.example.com/u/`, "the recipient's own unsubscribe link")
	require.Equal(t, http.StatusNotFound, e.do("", "GET", "/v/"+click, nil).Status)

	// The archive: listed, rendered without recipient data, strict CSP; not under B's address.
	res = e.do("", "GET", "/archive/"+publicA, nil)
	require.Equal(t, http.StatusOK, res.Status)
	requireStrictCSP(t, res)
	require.Contains(t, string(res.Body), `/archive/`+publicA+`/`+itoa(camp.Id))
	res = e.do("", "GET", "/archive/"+publicA+"/"+itoa(camp.Id), nil)
	require.Equal(t, http.StatusOK, res.Status)
	requireStrictCSP(t, res)
	for _, personal := range []string{"Ann", "Private", "Lyon", "ann@example.org"} {
		require.NotContains(t, string(res.Body), personal)
	}
	require.Equal(t, http.StatusNotFound, e.do("", "GET", "/archive/"+publicB+"/"+itoa(camp.Id), nil).Status)
	require.Equal(t, http.StatusNotFound, e.do("", "GET", "/archive/pub_nobody", nil).Status)
	require.Equal(t, http.StatusNotFound, e.do("", "GET", "/archive/"+publicA+"/x", nil).Status)
}

// requireStrictCSP: no script may run on a page that shows campaign content.
func requireStrictCSP(t *testing.T, res response) {
	t.Helper()
	csp := res.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "default-src 'none'")
	require.Contains(t, csp, "sandbox")
	require.NotContains(t, csp, "script-src")
	require.NotContains(t, csp, "allow-scripts")
	require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
}
