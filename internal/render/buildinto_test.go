package render_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/render"
)

// TestBuildIntoBuildsWhatBuildDoes: BuildInto, reusing one set of buffers from
// message to message, builds for each recipient the message Build builds (plain
// and html/template parts, static parts, tracked links and the open pixel, a
// part that does not render), and each one is whole until the next.
func TestBuildIntoBuildsWhatBuildDoes(t *testing.T) {
	t.Parallel()
	click := func(i int) string { return "https://t.example.com/c/" + strconv.Itoa(i) }
	for _, c := range []render.Campaign{
		{Subject: "News for {{.Name}}", HTML: `<p>Hi {{.Name}}</p><a href="https://example.com/a">a</a><a href="{{.UnsubscribeURL}}">u</a>`,
			Text: "Hi {{.Name}} {{.Attributes.plan}}", TrackClicks: true},
		{Subject: "Static", HTML: `<html><body><a href="https://example.com/b">b</a></body></html>`, Text: "Static text"},
		{Subject: "{{.Email}}", HTML: `<script>var x = {{.Name}};</script><p title="{{.Name}}">{{.Attributes.plan}}</p>`, Text: ""},
		{Subject: "S", HTML: "", Text: "Only text for {{.Name}}"},
	} {
		c.FromEmail = "news@example.com"
		p := prepare(t, c)
		var bufs render.Buffers
		for i, name := range []string{"Ada <3", "Grace", strings.Repeat("long name ", 400), ""} {
			r := render.Recipient{JobID: "campaign:1:" + strconv.Itoa(i), Email: "r" + strconv.Itoa(i) + "@example.org", Name: name,
				Attributes: []byte(`{"plan":"pro"}`)}
			for _, links := range []render.Links{
				{HTTPS: "https://example.com/u/" + strconv.Itoa(i), Mailto: "u@example.com"},
				{HTTPS: "https://example.com/u/x", Click: click, Open: "https://t.example.com/o/" + strconv.Itoa(i)},
			} {
				want, werr := p.Build(r, links)
				got, gerr := p.BuildInto(&bufs, r, links)
				require.Equal(t, werr, gerr)
				require.Equal(t, want, got, "%s: recipient %d", c.Subject, i)
				bufs.Trim()
			}
		}
	}
}

// TestBuildIntoRefusesWhatBuildRefuses: the same invalid-input errors.
func TestBuildIntoRefusesWhatBuildRefuses(t *testing.T) {
	t.Parallel()
	var bufs render.Buffers
	for _, c := range []render.Campaign{
		{Subject: "Hi", HTML: "{{if .Name}}x{{end}}", Text: " "},
		{Subject: "Hi", HTML: `{{range $i, $e := .Attributes.list}}{{$e}}{{end}}`, Text: "x"},
	} {
		c.FromEmail = "n@example.com"
		p := prepare(t, c)
		r := render.Recipient{JobID: "campaign:1:2", Email: "a@example.org", Attributes: []byte(`{"list":"abc"}`)}
		_, werr := p.Build(r, render.Links{})
		_, gerr := p.BuildInto(&bufs, r, render.Links{})
		require.Equal(t, werr, gerr)
		require.True(t, apperr.Is(gerr, apperr.Invalid), "%+v: %v", c, gerr)
	}
}
