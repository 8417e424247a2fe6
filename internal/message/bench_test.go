package message_test

import (
	"strings"
	"testing"

	"github.com/sendonce/sendonce/internal/message"
)

// benchTemplates is a typical newsletter: a few fields, a loop-free HTML body of
// about 4 KiB and its text version.
func benchTemplates(b *testing.B) *message.Templates {
	b.Helper()
	para := strings.Repeat(`<p>News for {{.Name}} on the {{.Attributes.plan}} plan. Lorem ipsum dolor sit amet.</p>`, 40)
	tpl, err := message.Parse("News for {{.Name}}",
		`<html><body><h1>Hello {{.Name}}</h1>`+para+`<a href="{{.UnsubscribeURL}}">Unsubscribe</a></body></html>`,
		"Hello {{.Name}}\n"+strings.Repeat("News on the {{.Attributes.plan}} plan.\n", 40)+"Unsubscribe: {{.UnsubscribeURL}}")
	if err != nil {
		b.Fatal(err)
	}
	return tpl
}

var benchData = message.Data{
	Email: "ada@example.org", Name: "Ada Lovelace",
	Attributes:     map[string]any{"plan": "pro", "city": "London"},
	UnsubscribeURL: "https://mail.example.com/u/AQEAAAAAAAAAAQAAAAAAAAACAAAAAAAAAAM.c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJl",
}

func BenchmarkRender(b *testing.B) {
	tpl := benchTemplates(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tpl.Render(benchData); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuild(b *testing.B) {
	r, err := benchTemplates(b).Render(benchData)
	if err != nil {
		b.Fatal(err)
	}
	c := message.Campaign{FromEmail: "news@example.com", FromName: "Example News", ReplyTo: "help@example.com"}
	rcpt := message.Recipient{JobID: "campaign:123:456789", Email: "ada@example.org", Name: "Ada Lovelace"}
	links := message.Links{HTTPS: benchData.UnsubscribeURL, Mailto: "unsubscribe@example.com"}
	b.ReportAllocs()
	for b.Loop() {
		_ = message.Build(c, rcpt, r, links)
	}
}
