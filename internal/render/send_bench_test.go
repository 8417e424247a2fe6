package render_test

import (
	"context"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// benchCampaign is a typical newsletter: a few fields, a loop-free HTML body of
// about 4 KiB and its text version.
func benchCampaign() render.Campaign {
	para := strings.Repeat(`<p>News for {{.Name}} on the {{.Attributes.plan}} plan. Lorem ipsum dolor sit amet.</p>`, 40)
	return render.Campaign{
		FromEmail: "news@example.com", FromName: "Example News", ReplyTo: "help@example.com",
		Subject: "News for {{.Name}}",
		HTML:    `<html><body><h1>Hello {{.Name}}</h1>` + para + `<a href="{{.UnsubscribeURL}}">Unsubscribe</a></body></html>`,
		Text:    "Hello {{.Name}}\n" + strings.Repeat("News on the {{.Attributes.plan}} plan.\n", 40) + "Unsubscribe: {{.UnsubscribeURL}}",
	}
}

type sender interface {
	Send(ctx context.Context, m provider.Message) (string, error)
}

type instantSender struct{}

func (instantSender) Send(_ context.Context, m provider.Message) (string, error) { return m.JobID, nil }

// BenchmarkSend is the executor's per-message work without the database: sign the
// unsubscribe link, build the message (render, keyed Message-ID, headers) and hand
// it to a provider: instant (no I/O), http (to the HTTP sink on httptest) or smtp
// (the SMTP provider to the go-smtp sink, one persistent connection). The sinks run in this
// process, so their CPU and allocations are counted too.
func BenchmarkSend(b *testing.B) {
	for _, name := range []string{"instant", "http", "smtp"} {
		b.Run(name, func(b *testing.B) {
			p := benchSender(b, name)
			keys, err := token.NewRing([]string{"k1:0123456789abcdef0123456789abcdef"})
			if err != nil {
				b.Fatal(err)
			}
			links := unsubscribe.NewSigner(keys).Links("https://mail.example.com", "unsubscribe@example.com")
			prepared, err := newBuilder(b).Prepare(benchCampaign())
			if err != nil {
				b.Fatal(err)
			}
			attrs := []byte(`{"plan":"pro","city":"London"}`)
			ctx := context.Background()
			i := int64(0)
			b.ReportAllocs()
			for b.Loop() {
				i++
				h, mt := links(7, 123, i)
				m, err := prepared.Build(render.Recipient{JobID: "campaign:123:" + strconv.FormatInt(i, 10),
					Email: "ada@example.org", Name: "Ada Lovelace", Attributes: attrs}, render.Links{HTTPS: h, Mailto: mt})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Send(ctx, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchSender(b *testing.B, name string) sender {
	switch name {
	case "http":
		srv := httptest.NewServer(sink.NewHTTP(sink.HTTPOptions{}))
		b.Cleanup(srv.Close)
		hp, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { hp.Close() })
		return hp
	case "smtp":
		s := sink.NewSMTP(sink.SMTPOptions{})
		addr, err := s.Listen("127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		host, port, _ := net.SplitHostPort(addr)
		portNum, _ := strconv.Atoi(port)
		sp, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: portNum, Security: "none", Conns: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { sp.Close() })
		return sp
	}
	return instantSender{}
}

// BenchmarkRender is the template part of BenchmarkSend alone.
func BenchmarkRender(b *testing.B) {
	c := benchCampaign()
	tpl, err := render.Parse(c.Subject, c.HTML, c.Text)
	if err != nil {
		b.Fatal(err)
	}
	r := render.Recipient{Email: "ada@example.org", Name: "Ada Lovelace", Attributes: []byte(`{"plan":"pro","city":"London"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tpl.Render(r, "https://mail.example.com/u/AQJrMQECAwCM-9SXBa-OuJyBTcSN2gUoHdPryfTZkCCdhrDYyvQj"); err != nil {
			b.Fatal(err)
		}
	}
}
