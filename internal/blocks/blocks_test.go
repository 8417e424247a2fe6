package blocks_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/blocks"
	"github.com/sendonce/sendonce/internal/render"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGolden renders each testdata/*.json and compares the HTML and text template
// sources with the golden files beside it (go test -update rewrites them).
func TestGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		h, txt, err := blocks.Convert(src)
		require.NoError(t, err, f)
		base := strings.TrimSuffix(f, ".json")
		for ext, got := range map[string]string{".html": h, ".txt": txt} {
			if *update {
				require.NoError(t, os.WriteFile(base+ext, []byte(got), 0o644))
				continue
			}
			want, err := os.ReadFile(base + ext)
			require.NoError(t, err)
			require.Equal(t, string(want), got, base+ext)
		}
		// What it renders to is a template the render package accepts, and
		// renders with the Outlook ghost tables kept.
		tpl, err := render.Parse("s", h, txt)
		require.NoError(t, err, f)
		out, err := tpl.Render(render.Recipient{Name: "Ada", Attributes: []byte(`{"plan":"pro","uid":"7"}`)}, "https://x.test/u/1")
		require.NoError(t, err)
		require.Contains(t, out.HTML, `<!--[if mso | IE]><table align="center"`)
		require.Contains(t, out.HTML, `<h1 style="margin:0;`)
		require.Contains(t, out.HTML, `Hello Ada</h1>`)
		require.Contains(t, out.Text, "Hello Ada\n=========")
		require.Contains(t, out.Text, "Stop these emails: https://x.test/u/1")
	}
}

// Outlook for Windows reads the conditional comments' markup as part of the
// document, every other client skips it: either way the tables open and close in
// order, and no two comments follow one another (they are merged into one, as
// MJML merges them).
func TestOutlookGhostTablesNest(t *testing.T) {
	t.Parallel()
	cols := func(n int) []blocks.Column {
		var out []blocks.Column
		for range n {
			out = append(out, blocks.Column{Blocks: []blocks.Block{{Type: "text", Text: "x"}, {Type: "divider"}}})
		}
		return out
	}
	h, _ := blocks.Render(blocks.Design{Rows: []blocks.Row{{Columns: cols(1)}, {Columns: cols(2)}, {Columns: cols(3)}, {Columns: cols(1)}}})
	require.NotRegexp(t, `<!\[endif\]-->\s*<!--\[if`, h)
	outlook := strings.NewReplacer("<!--[if mso | IE]>", "", "<![endif]-->", "").Replace(h)
	others := regexp.MustCompile(`(?s)<!--\[if mso \| IE\]>.*?<!\[endif\]-->`).ReplaceAllString(h, "")
	tag := regexp.MustCompile(`<(/?)(table|tr|td)[ >]`)
	for view, doc := range map[string]string{"Outlook": outlook, "other clients": others} {
		var open []string
		for _, m := range tag.FindAllStringSubmatch(doc, -1) {
			if m[1] == "" {
				open = append(open, m[2])
				continue
			}
			require.NotEmpty(t, open, "%s: </%s> closes nothing", view, m[2])
			require.Equal(t, open[len(open)-1], m[2], "%s: </%s> closes <%s>", view, m[2], open[len(open)-1])
			open = open[:len(open)-1]
		}
		require.Empty(t, open, view)
	}
	// Outlook gets one fixed-width cell per column.
	require.Equal(t, 1+2+3+1, strings.Count(outlook, `<td style="vertical-align:top;width:`))
}

// Hostile text cannot leave its element or attribute, and a URL from data that
// is not safe is defused by html/template.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	design := `{"rows":[{"columns":[{"blocks":[
		{"type":"heading","text":"<script>alert(1)</script>"},
		{"type":"text","text":"\"><img src=x onerror=alert(1)> {{.Name}}"},
		{"type":"button","text":"Go</a><a href=javascript:alert(1)>","url":"{{.Attributes.link}}"},
		{"type":"image","src":"https://x.test/i.png?a=\"onload=alert(1)","alt":"\" onerror=\"alert(1)"},
		{"type":"footer","text":"<![endif]--><!--[if mso]>","unsubscribe":"<b>bye</b>"}
	]}]}]}`
	h, txt, err := blocks.Convert([]byte(design))
	require.NoError(t, err)
	tpl, err := render.Parse("s", h, txt)
	require.NoError(t, err)
	out, err := tpl.Render(render.Recipient{Name: "<script>x</script>", Attributes: []byte(`{"link":"javascript:alert(1)"}`)}, "https://x.test/u/1")
	require.NoError(t, err)
	for _, bad := range []string{"<script", "<img src=x", "onerror=\"alert", `href="javascript:`, "<a href=javascript:", "<b>bye", "\" onload", `"onload`} {
		require.NotContains(t, out.HTML, bad)
	}
	require.Contains(t, out.HTML, `href="#ZgotmplZ"`)
	require.Contains(t, out.HTML, "&lt;script&gt;alert(1)&lt;/script&gt;")
	require.Equal(t, strings.Count(h, "<!--[if"), strings.Count(out.HTML, "<!--[if"), "a footer's text opened no conditional comment")
}

// Each bad design is a 422 naming the field.
func TestInvalidDesigns(t *testing.T) {
	t.Parallel()
	block := func(b string) string { return `{"rows":[{"columns":[{"blocks":[` + b + `]}]}]}` }
	many := strings.Repeat(`{"type":"spacer"},`, blocks.MaxBlocks) + `{"type":"spacer"}`
	for _, tc := range []struct{ design, pointer string }{
		{`[]`, "/blocks"},
		{`{"rows":[]}`, "/blocks/rows"},
		{`{"rows":[{"columns":[{"blocks":[]}]}], "font":"x"}`, "/blocks/font"},
		{block(`{"type":"video","src":"https://x.test/v"}`), "/blocks/rows/0/columns/0/blocks/0/type"},
		{block(`{"type":"text","text":"x","src":"y"}`), "/blocks/rows/0/columns/0/blocks/0/src"},
		{block(`{"type":"text"}`), "/blocks/rows/0/columns/0/blocks/0/text"},
		{block(`{"type":"text","text":"{{.Name"}`), "/blocks/rows/0/columns/0/blocks/0/text"},
		{block(`{"type":"button","text":"Go","url":"javascript:alert(1)"}`), "/blocks/rows/0/columns/0/blocks/0/url"},
		{block(`{"type":"button","text":"Go","url":"/relative"}`), "/blocks/rows/0/columns/0/blocks/0/url"},
		{block(`{"type":"button","text":"Go","url":" https://x.test"}`), "/blocks/rows/0/columns/0/blocks/0/url"},
		{block(`{"type":"image","src":"https://x.test/a.png"}`), "/blocks/rows/0/columns/0/blocks/0/alt"},
		{block(`{"type":"image","src":"https://x.test/a.png","alt":"  "}`), "/blocks/rows/0/columns/0/blocks/0/alt"},
		{block(`{"type":"image","src":"data:image/png;base64,AAAA","alt":"a"}`), "/blocks/rows/0/columns/0/blocks/0/src"},
		{block(`{"type":"image","src":"mailto:a@b.c","alt":"a"}`), "/blocks/rows/0/columns/0/blocks/0/src"},
		{block(`{"type":"image","src":"https://x.test/a.png","alt":"a","width":5000}`), "/blocks/rows/0/columns/0/blocks/0/width"},
		{block(`{"type":"spacer","height":1.5}`), "/blocks/rows/0/columns/0/blocks/0/height"},
		{block(`{"type":"heading","text":"x","level":4}`), "/blocks/rows/0/columns/0/blocks/0/level"},
		{block(`{"type":"heading","text":"x","color":"red;background:url(x)"}`), "/blocks/rows/0/columns/0/blocks/0/color"},
		{block(`{"type":"heading","text":"x","align":"justify"}`), "/blocks/rows/0/columns/0/blocks/0/align"},
		{block(`{"type":"social","links":[{"network":"myspace","url":"https://x.test"}]}`), "/blocks/rows/0/columns/0/blocks/0/links/0/network"},
		{block(`{"type":"text","text":"` + strings.Repeat("x", blocks.MaxText+1) + `"}`), "/blocks/rows/0/columns/0/blocks/0/text"},
		{block(many), "/blocks/rows/0/columns/0/blocks"},
		{`{"rows":[{"columns":[{"rows":[]}]}]}`, "/blocks/rows/0/columns/0/rows"},
		{`{"rows":[{"columns":[{"blocks":[{"type":"spacer"}]},{"blocks":[]},{"blocks":[]},{"blocks":[]},{"blocks":[]}]}]}`, "/blocks/rows/0/columns"},
		{`{"rows":[{"columns":[{"width":70,"blocks":[{"type":"spacer"}]},{"width":20,"blocks":[]}]}]}`, "/blocks/rows/0/columns"},
		{`{"width":2000,"rows":[{"columns":[{"blocks":[{"type":"spacer"}]}]}]}`, "/blocks/width"},
	} {
		_, _, err := blocks.Convert([]byte(tc.design))
		require.Error(t, err, tc.pointer)
		var e *apperr.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, apperr.Invalid, e.Code)
		require.Equal(t, tc.pointer, e.Fields[0].Pointer, "%s: %s", tc.design[:min(len(tc.design), 120)], e.Message)
	}
}
