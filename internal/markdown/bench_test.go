package markdown_test

import (
	"testing"
	"time"

	"github.com/sendonce/sendonce/internal/markdown"
	"github.com/sendonce/sendonce/internal/render"
)

const benchMarkdown = `# News for {{.Name}}

Hello {{.Attributes.first_name}}, here is what changed this month on the **{{.Attributes.plan}}** plan.

| Feature | Status |
|---------|--------|
| Markdown | shipped |
| Layouts | shipped |

- faster sends
- [a new dashboard](https://example.com/dashboard)

[Unsubscribe]({{.UnsubscribeURL}})
`

// benchHTML is the same message as hand-written HTML, as a campaign has it today.
const benchHTML = `<h1>News for {{.Name}}</h1>
<p>Hello {{.Attributes.first_name}}, here is what changed this month on the <strong>{{.Attributes.plan}}</strong> plan.</p>
<table><thead><tr><th>Feature</th><th>Status</th></tr></thead>
<tbody><tr><td>Markdown</td><td>shipped</td></tr><tr><td>Layouts</td><td>shipped</td></tr></tbody></table>
<ul><li>faster sends</li><li><a href="https://example.com/dashboard">a new dashboard</a></li></ul>
<p><a href="{{.UnsubscribeURL}}">Unsubscribe</a></p>
`

const benchText = `News for {{.Name}}

Hello {{.Attributes.first_name}}, here is what changed this month on the {{.Attributes.plan}} plan.

Unsubscribe ({{.UnsubscribeURL}})
`

// BenchmarkMarkdownVsHTML measures the per-message render cost of a Markdown
// campaign (converted once when saved) against today's HTML campaign, in
// alternating rounds so machine load falls on both alike, and reports the ratio.
// It also reports what converting per message instead would cost (convert/msg
// ratio), which is why conversion happens when the content is saved.
//
//	go test ./internal/markdown -run '^$' -bench MarkdownVsHTML -benchtime 1x
func BenchmarkMarkdownVsHTML(b *testing.B) {
	conv, err := markdown.Convert(benchMarkdown)
	if err != nil {
		b.Fatal(err)
	}
	htmlT, err := render.Parse("News for {{.Name}}", benchHTML, benchText)
	if err != nil {
		b.Fatal(err)
	}
	mdT, err := render.Parse("News for {{.Name}}", conv.HTML, conv.Text)
	if err != nil {
		b.Fatal(err)
	}
	r := render.Recipient{Email: "ann@example.com", Name: "Ann", Attributes: []byte(`{"first_name":"Ann","plan":"pro"}`)}
	const perRound, rounds = 2000, 10
	run := func(t *render.Templates) time.Duration {
		start := time.Now()
		for range perRound {
			if _, err := t.Render(r, "https://example.com/u/x"); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	perMessage := func() time.Duration {
		start := time.Now()
		for range perRound {
			c, err := markdown.Convert(benchMarkdown)
			if err != nil {
				b.Fatal(err)
			}
			t, err := render.Parse("News for {{.Name}}", c.HTML, c.Text)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := t.Render(r, "https://example.com/u/x"); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	for range b.N {
		var h, m, p time.Duration
		for range rounds {
			h += run(htmlT)
			m += run(mdT)
			p += perMessage()
		}
		n := float64(perRound * rounds)
		b.ReportMetric(float64(h.Nanoseconds())/n, "html-ns/msg")
		b.ReportMetric(float64(m.Nanoseconds())/n, "md-ns/msg")
		b.ReportMetric(float64(m)/float64(h), "md/html")
		b.ReportMetric(float64(p)/float64(h), "convert-per-msg/html")
	}
}
