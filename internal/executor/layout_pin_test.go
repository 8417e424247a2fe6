package executor

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	campaignsvc "github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/layout"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/template"
)

// mimeParts returns the decoded text/plain and text/html bodies of a raw message.
func mimeParts(t *testing.T, raw []byte) (text, html string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	var walk func(ct, cte string, body io.Reader)
	walk = func(ct, cte string, body io.Reader) {
		mt, params, err := mime.ParseMediaType(ct)
		require.NoError(t, err)
		if strings.HasPrefix(mt, "multipart/") {
			r := multipart.NewReader(body, params["boundary"])
			for {
				p, err := r.NextRawPart()
				if err == io.EOF {
					return
				}
				require.NoError(t, err)
				walk(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p)
			}
		}
		if strings.EqualFold(cte, "quoted-printable") {
			body = quotedprintable.NewReader(body)
		}
		b, err := io.ReadAll(body)
		require.NoError(t, err)
		switch mt {
		case "text/plain":
			text = string(b)
		case "text/html":
			html = string(b)
		}
	}
	walk(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	return text, html
}

// A campaign made from a Markdown template in a layout is pinned at approval: the
// layout edited after approval recomposes the template (and drafts), while every
// message of the approved campaign, sent through the executor and SMTP and parsed
// back from its MIME, carries the layout and body as approved, with a text part
// made from the Markdown.
func TestApprovedCampaignKeepsItsLayout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "r", 3, "confirmed")
	list := f.list(acct, "l")
	f.members(acct, list, "r")

	layouts, templates, campaigns := layout.NewService(pool), template.NewService(pool), campaignsvc.NewService(pool)
	str := func(s string) *string { return &s }
	l, err := layouts.Create(ctx, acct, layout.Fields{Name: str("brand"),
		HTML: str(`<div class="frame-v1">{{content}}<a href="{{.UnsubscribeURL}}">Leave</a></div>`),
		Text: str("{{content}}\n-- v1 --")})
	require.NoError(t, err)
	md := "# Hello {{.Name}}\n\n| Item | Qty |\n|---|---|\n| {{.Attributes.n | printf \"n=%v\"}} | 2 |\n\n[Shop](https://shop.example/)\n"
	tpl, err := templates.Create(ctx, acct, template.Fields{Name: str("news"), Subject: str("News for {{.Name}}"),
		ContentType: str("markdown"), Markdown: str(md), LayoutID: &l.ID})
	require.NoError(t, err)
	c, err := campaigns.Create(ctx, acct, campaignsvc.Fields{Name: str("c"), FromEmail: str("news@example.com"),
		ListIDs: &[]int64{list}, TemplateID: &tpl.ID})
	require.NoError(t, err)
	_, err = campaigns.Approve(ctx, acct, c.ID, nil)
	require.NoError(t, err)

	// The layout changes after approval: the template follows, the campaign does not.
	_, err = layouts.Update(ctx, acct, l.ID, layout.Fields{HTML: str(`<div class="frame-v2">{{content}}</div>`), Text: str("{{content}}\n-- v2 --")})
	require.NoError(t, err)
	tpl, err = templates.Get(ctx, acct, tpl.ID)
	require.NoError(t, err)
	require.Contains(t, tpl.HTML, "frame-v2")

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
		require.Contains(t, html, `<div class="frame-v1"><h1>Hello Sub `)
		require.NotContains(t, html, "frame-v2")
		require.Regexp(t, `<td>n=[1-3]</td>`, html)
		require.Contains(t, html, `<a href="https://`) // the unsubscribe link, rendered
		require.Contains(t, text, "-- v1 --")
		require.NotContains(t, text, "v2")
		require.Contains(t, text, "Shop (https://shop.example/)")
		require.Regexp(t, `Hello Sub [1-3]\r?\n=+`, text)
	}
}
