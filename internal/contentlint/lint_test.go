package contentlint_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/contentlint"
)

func rules(fs []contentlint.Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return out
}

// A clean campaign has no finding; each fault is found once, by its rule, in
// its part; a transactional message needs no unsubscribe link.
func TestLint(t *testing.T) {
	t.Parallel()
	body := `<p>Hello {{.Name}}, our spring collection is here with twelve new colours and free shipping this week.</p>
<p><img src="https://cdn.example.com/spring.png" alt="The spring collection"> <img src="https://cdn.example.com/line.png" alt=""></p>
<p><a href="https://shop.example.com/spring">See the spring collection</a> · <a href="{{.UnsubscribeURL}}">Unsubscribe</a></p>`
	clean := contentlint.Content{Kind: contentlint.Campaign, Subject: "Spring is here", HTML: body, Text: "Hello {{.Name}} {{.UnsubscribeURL}}"}
	require.Empty(t, contentlint.Lint(clean))

	for _, c := range []struct {
		name  string
		edit  func(*contentlint.Content)
		rules []string
	}{
		{"image without alt", func(c *contentlint.Content) { c.HTML += `<img src="x.png">` }, []string{"image-alt-missing"}},
		{"generic link", func(c *contentlint.Content) { c.HTML += `<a href="https://shop.example.com">Click here!</a>` }, []string{"link-text-generic"}},
		{"generic link named by aria-label", func(c *contentlint.Content) {
			c.HTML += `<a href="https://shop.example.com" aria-label="The shop">here</a>`
		}, []string{}},
		{"image link named by its alt", func(c *contentlint.Content) {
			c.HTML += `<a href="https://shop.example.com"><img src="logo.png" alt="Example shop"></a>`
		}, []string{}},
		{"shortener", func(c *contentlint.Content) { c.HTML += `<a href="https://bit.ly/3abc">The offer</a>` }, []string{"link-shortener"}},
		{"script and form", func(c *contentlint.Content) { c.HTML += `<script>x()</script><form action="/x"></form>` }, []string{"element-stripped", "element-stripped"}},
		{"capitals", func(c *contentlint.Content) { c.Subject = "HUGE SPRING SALE NOW" }, []string{"subject-all-caps"}},
		{"exclamations", func(c *contentlint.Content) { c.Subject = "Spring sale!!!" }, []string{"subject-exclamations"}},
		{"no unsubscribe", func(c *contentlint.Content) {
			c.HTML = strings.ReplaceAll(c.HTML, "{{.UnsubscribeURL}}", "https://example.com/prefs")
			c.Text = "Hello"
		}, []string{"unsubscribe-missing"}},
		{"images only", func(c *contentlint.Content) {
			c.HTML = `<a href="{{.UnsubscribeURL}}"><img src="a.png" alt="Sale"></a>`
		}, []string{"images-only"}},
		{"clipped", func(c *contentlint.Content) { c.HTML += "<!--" + strings.Repeat("x", contentlint.ClipBytes) + "-->" }, []string{"html-clipped"}},
		{"no text part", func(c *contentlint.Content) { c.Text = "" }, []string{"text-missing"}},
	} {
		got := clean
		c.edit(&got)
		require.Equal(t, c.rules, rules(contentlint.Lint(got)), c.name)
	}

	msg := clean
	msg.Kind = contentlint.Message
	msg.HTML = strings.ReplaceAll(msg.HTML, "{{.UnsubscribeURL}}", "https://example.com")
	msg.Text = "Your receipt"
	require.Empty(t, contentlint.Lint(msg), "a transactional message needs no unsubscribe link")

	f := contentlint.Lint(contentlint.Content{Kind: contentlint.Campaign, Subject: "x", HTML: body + `<img src="` + strings.Repeat("a", 300) + `">`, Text: "{{.UnsubscribeURL}}"})
	require.Len(t, f, 1)
	require.Equal(t, "/html", f[0].Field)
	require.LessOrEqual(t, len([]rune(f[0].Excerpt)), 120, "excerpts are short")
}
