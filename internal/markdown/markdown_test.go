package markdown_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/markdown"
	"github.com/sendonce/sendonce/internal/render"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGolden converts each testdata/*.md and compares the HTML and text template
// sources with the golden files beside it (go test -update rewrites them).
func TestGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		out, err := markdown.Convert(string(src))
		require.NoError(t, err, f)
		base := strings.TrimSuffix(f, ".md")
		for ext, got := range map[string]string{".html": out.HTML, ".txt": out.Text} {
			if *update {
				require.NoError(t, os.WriteFile(base+ext, []byte(got), 0o644))
				continue
			}
			want, err := os.ReadFile(base + ext)
			require.NoError(t, err)
			require.Equal(t, string(want), got, base+ext)
		}
		// Every output is a template the render package accepts.
		_, err = render.Parse("s", out.HTML, out.Text)
		require.NoError(t, err, f)
	}
}

// TestActionsRender renders converted Markdown for a recipient: the actions'
// quotes, pipes and underscores reached the template intact, and html/template
// escaped the data where it landed.
func TestActionsRender(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/actions.md")
	require.NoError(t, err)
	out, err := markdown.Convert(string(src))
	require.NoError(t, err)
	tpl, err := render.Parse("s", out.HTML, out.Text)
	require.NoError(t, err)
	r := render.Recipient{Email: "ann@example.com", Name: "Ann",
		Attributes: []byte(`{"first_name":"<Ann>","plan":"pro_plan","snake_case_key":"v_1","a|b":"piped"}`)}
	got, err := tpl.Render(r, "https://example.com/u/x")
	require.NoError(t, err)
	require.Contains(t, got.HTML, `Hello &#34;&lt;Ann&gt;&#34;, <em>welcome</em>!`)
	require.Contains(t, got.HTML, `You are on the <strong>pro</strong> plan: v_1 and piped.`)
	require.NotContains(t, got.HTML, "Upgrade")
	require.Contains(t, got.HTML, `<code>ann@example.com</code>`)
	require.Contains(t, got.Text, `Hello "<Ann>", welcome!`)
	require.Contains(t, got.Text, `You are on the pro plan: v_1 and piped.`)

	r.Attributes = []byte(`{"plan":"free"}`)
	got, err = tpl.Render(r, "https://example.com/u/x")
	require.NoError(t, err)
	require.Contains(t, got.HTML, "Upgrade to pro_plan_2 * now *.")
	require.NotContains(t, got.HTML, "<p>{{")
}

// TestRawHTMLEscapesData: raw HTML is kept as the author wrote it (as in HTML
// content), and data reaching an attribute or URL through an action is escaped by
// html/template for that context.
func TestRawHTMLEscapesData(t *testing.T) {
	t.Parallel()
	out, err := markdown.Convert(`<a href="{{.Attributes.u}}" title="{{.Name}}">x</a> [y]({{.Attributes.u}})`)
	require.NoError(t, err)
	tpl, err := render.Parse("s", out.HTML, out.Text)
	require.NoError(t, err)
	got, err := tpl.Render(render.Recipient{Email: "a@example.com", Name: `"><script>`,
		Attributes: []byte(`{"u":"javascript:alert(1)"}`)}, "https://example.com/u/x")
	require.NoError(t, err)
	require.NotContains(t, got.HTML, "javascript:")
	require.NotContains(t, got.HTML, "<script>")
	require.Contains(t, got.HTML, "#ZgotmplZ")
}

// TestPlaceholderCollision: text of the author's that looks like a placeholder is
// never taken for one.
func TestPlaceholderCollision(t *testing.T) {
	t.Parallel()
	out, err := markdown.Convert("mdact0z and mdactq0z {{.Name}}")
	require.NoError(t, err)
	require.Equal(t, "<p>mdact0z and mdactq0z {{.Name}}</p>\n", out.HTML)
}

// TestUnclosedAction names the line of an action that never closes.
func TestUnclosedAction(t *testing.T) {
	t.Parallel()
	_, err := markdown.Convert("a\n\nb {{.Name \"}}\"")
	require.ErrorContains(t, err, "line 3")
	out, err := markdown.Convert(`x {{printf "%s}}" .Name}} y`)
	require.NoError(t, err)
	require.Equal(t, "<p>x {{printf \"%s}}\" .Name}} y</p>\n", out.HTML)
}
