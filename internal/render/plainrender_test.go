package render

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/blocks"
)

// A block design (conditional comments, fields in text, attributes and URLs)
// renders through its plain form byte for byte as html/template renders it, for
// recipients whose data needs escaping, is not a string, or is missing.
func TestPlainBlocksMatchHTMLTemplate(t *testing.T) {
	t.Parallel()
	link := blocks.Block{Type: "button", Text: "Go {{.Name}}", URL: "https://example.com/g?u={{.Attributes.uid}}&e={{.Email}}"}
	d := blocks.Design{Background: "#f4f4f4", Rows: []blocks.Row{
		{Columns: []blocks.Column{{Blocks: []blocks.Block{
			{Type: "heading", Level: 1, Text: "Hi {{.Name}} <3"},
			{Type: "text", Text: "Plan {{.Attributes.plan}}, {{.Attributes.n}} left.\n\nAll: {{.Attributes}}"},
			link,
			{Type: "image", Src: "https://cdn.example.com/{{.Attributes.img}}.png", Alt: "A {{.Attributes.plan}} & b", URL: "{{.Attributes.site}}"},
			{Type: "divider"},
		}}}},
		{Columns: []blocks.Column{
			{Blocks: []blocks.Block{{Type: "text", Text: "{{.Attributes.missing}}|{{$.Name}}"}}},
			{Blocks: []blocks.Block{{Type: "spacer"}, link, {Type: "footer", Text: "Sent to {{.Email}}"}}},
		}},
	}}
	h, txt := blocks.Render(d)
	require.Contains(t, h, "<!--[if mso")
	for _, subject := range []string{"News for {{.Name}}", "News"} {
		fast, err := Parse(subject, h, txt)
		require.NoError(t, err)
		require.NotNil(t, fast.plain[partHTML], "the design renders plain")
		require.NotNil(t, fast.plain[partText])
		slow, err := Parse(subject, h, txt)
		require.NoError(t, err)
		slow.plain = [parts]plain{}
		for i, r := range []Recipient{
			{Email: "ada@example.org", Name: "Ada", Attributes: []byte(`{"plan":"pro","uid":"7","n":3,"img":"a b","site":"https://x.test/?q=1&r=2"}`)},
			{Email: "o'brien+x@example.org", Name: `Bob "<b>" & 'co' + é ` + "\x00\xff", Attributes: []byte(`{"plan":"<i>","uid":"a&b c/d?e=%zz","n":1e21,"img":null,"site":"javascript:alert(1)"}`)},
			{Email: "c@example.org", Name: "", Attributes: []byte(`{"plan":true,"uid":[1,"x"],"n":{"k":null},"site":"mailto:a@b"}`)},
			{Email: "d@example.org", Name: strings.Repeat("long ", 300)},
		} {
			want, err := slow.Render(r, "https://x.test/u/"+strconv.Itoa(i)+"?a=b&c")
			require.NoError(t, err)
			got, err := fast.Render(r, "https://x.test/u/"+strconv.Itoa(i)+"?a=b&c")
			require.NoError(t, err)
			require.Equal(t, want, got, "recipient %d", i)
		}
	}
}

// A plain part past its output limit fails the recipient, naming the part, as an
// executed one does.
func TestPlainStopsAtTheLimits(t *testing.T) {
	t.Parallel()
	b := strings.Repeat("b", 40_000)
	for _, tc := range []struct{ subject, html, text, pointer, detail string }{
		{"{{.Attributes.b}}", "x", "x", "/subject", "more than 4096 bytes"},
		{"s", strings.Repeat("<p>{{.Attributes.b}}</p>", 14), "x", "/html_template", "more than 524288 bytes"},
		{"s", "x", strings.Repeat("{{.Attributes.b}}", 14), "/text_template", "more than 524288 bytes"},
	} {
		tpl, err := Parse(tc.subject, tc.html, tc.text)
		require.NoError(t, err)
		for i, s := range tpl.static {
			require.True(t, s != nil || tpl.plain[i] != nil, "part %d is plain", i)
		}
		_, err = tpl.Render(Recipient{Attributes: []byte(`{"b":"` + b + `"}`)}, "")
		require.True(t, apperr.Is(err, apperr.Invalid), "%v", err)
		require.Equal(t, tc.pointer, err.(*apperr.Error).Fields[0].Pointer)
		require.Contains(t, err.Error(), tc.detail)
		if tc.pointer != "/subject" { // 14 copies of a shorter value fit
			_, err = tpl.Render(Recipient{Attributes: []byte(`{"b":"` + b[:36_000] + `"}`)}, "")
			require.NoError(t, err)
		}
	}
}
