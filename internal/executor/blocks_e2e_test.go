package executor

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	campaignsvc "github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/layout"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
)

// A campaign built only with blocks (no HTML typed) in the account's default
// layout goes out through the executor and SMTP; each message parsed back from
// its MIME carries the layout, the blocks rendered for its recipient (Outlook's
// ghost tables included) and a readable text part. A layout edited after approval
// changes nothing sent.
func TestBlocksCampaignGoesOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "r", 3, "confirmed")
	list := f.list(acct, "l")
	f.members(acct, list, "r")

	layouts, campaigns := layout.NewService(pool), campaignsvc.NewService(pool)
	str := func(s string) *string { return &s }
	yes := true
	l, err := layouts.Create(ctx, acct, layout.Fields{Name: str("brand"), Default: &yes,
		HTML: str(`<!doctype html><html lang="en"><body class="frame-v1">{{content}}</body></html>`),
		Text: str("{{content}}\n-- brand v1 --")})
	require.NoError(t, err)
	design := json.RawMessage(`{"rows":[
		{"columns":[{"blocks":[
			{"type":"heading","text":"Hello {{.Name}}"},
			{"type":"text","text":"Your plan is {{.Attributes.n | printf \"n=%v\"}}."},
			{"type":"button","text":"Open the shop","url":"https://shop.example/?n={{.Attributes.n}}"}]}]},
		{"columns":[
			{"blocks":[{"type":"image","src":"https://cdn.example/a.png","alt":"A new lamp"}]},
			{"blocks":[{"type":"text","text":"Lamps & more"}]}]},
		{"columns":[{"blocks":[{"type":"divider"},{"type":"footer","text":"Example Ltd","unsubscribe":"Leave this list"}]}]}]}`)
	c, err := campaigns.Create(ctx, acct, campaignsvc.Fields{Name: str("c"), Subject: str("News for {{.Name}}"),
		FromEmail: str("news@example.com"), ListIDs: &[]int64{list}, ContentType: str("blocks"), Blocks: design})
	require.NoError(t, err)
	require.Equal(t, "blocks", c.ContentType)
	require.JSONEq(t, string(design), string(c.Blocks))
	require.Contains(t, c.HTMLTemplate, "frame-v1")
	_, err = campaigns.Approve(ctx, acct, c.ID, nil)
	require.NoError(t, err)
	_, err = layouts.Update(ctx, acct, l.ID, layout.Fields{HTML: str(`<div class="frame-v2">{{content}}</div>`)})
	require.NoError(t, err)

	s := sink.NewSMTP(sink.SMTPOptions{KeepMessages: true})
	addr, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	n, err := strconv.Atoi(port)
	require.NoError(t, err)
	p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: n, Security: "none", Conns: 2, Timeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })

	e := newExecutor(t, pool, p, Config{Tick: 50 * time.Millisecond, Workers: 2, BatchSize: 10, Poll: 20 * time.Millisecond})
	runUntil(t, e)
	waitSent(t, f, e, c.ID)
	msgs := s.Messages()
	require.Len(t, msgs, 3)
	for _, m := range msgs {
		text, html := mimeParts(t, m.Raw)
		require.Contains(t, html, `<body class="frame-v1">`)
		require.NotContains(t, html, "frame-v2")
		require.Contains(t, html, `<!--[if mso | IE]><table align="center"`)
		require.Regexp(t, `<h1 [^>]*>Hello Sub [1-3]</h1>`, html)
		require.Regexp(t, `Your plan is n=[1-3]\.`, html)
		require.Regexp(t, `<a href="https://shop\.example/\?n=[1-3]"`, html)
		require.Contains(t, html, `<img alt="A new lamp" src="https://cdn.example/a.png"`)
		require.Contains(t, html, `Lamps &amp; more`)
		require.Regexp(t, `<a href="https://[^"]+"[^>]*>Leave this list</a>`, html)
		require.Regexp(t, `Hello Sub [1-3]\r?\n=+`, text)
		require.Regexp(t, `Open the shop: https://shop\.example/\?n=[1-3]`, text)
		require.Contains(t, text, "Lamps & more")
		require.Regexp(t, `Leave this list: https://\S+`, text)
		require.Contains(t, text, "-- brand v1 --")
	}
}
