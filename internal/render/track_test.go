package render_test

import (
	"html"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/render"
)

const trackedHTML = `<html><body>
<p>Hi {{.Name}}, <a href="https://shop.example/sale?a=1&amp;b=2" class="btn">See the <b>sale</b></a></p>
<p><A HREF="https://shop.example/sale?a=1&amp;b=2">again</A> <a href="http://blog.example/post">blog</a></p>
<p><a href="mailto:help@example.com">mail</a> <a href="tel:+123">call</a> <a href="#top">top</a>
<a href="/relative">rel</a> <a href="https://x.example/?e={{.Email}}">mine</a> <a href="javascript:alert(1)">js</a></p>
<map><area href="https://map.example/" alt="map"></map>
<p><a href="{{.UnsubscribeURL}}">Unsubscribe</a> <a href="{{.WebViewURL}}">View in browser</a></p>
</body></html>`

func TestTrackableLinksTakesOnlyLiteralHTTPLinks(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"https://shop.example/sale?a=1&b=2", "http://blog.example/post", "https://map.example/"},
		render.TrackableLinks(trackedHTML))
	require.Nil(t, render.TrackableLinks(`<p>no links</p>`))
}

func TestBuildRewritesTrackedLinksKeepingTheirText(t *testing.T) {
	t.Parallel()
	p, err := render.NewRandomBuilder().Prepare(render.Campaign{TrackClicks: true, FromEmail: "news@example.com",
		Subject: "s", HTML: trackedHTML, Text: "t"})
	require.NoError(t, err)
	require.Equal(t, render.TrackableLinks(trackedHTML), p.Links())
	click := func(i int) string { return "https://t.example/c/tok" + strconv.Itoa(i) }
	m, err := p.Build(render.Recipient{JobID: "j", Email: "ann@example.org", Name: "Ann"},
		render.Links{HTTPS: "https://t.example/u/unsub", Click: click, Open: "https://t.example/o/px",
			WebView: "https://t.example/v/view"})
	require.NoError(t, err)
	h := m.HTML
	require.Contains(t, h, `<a href="https://t.example/c/tok1" class="btn">See the <b>sale</b></a>`)
	require.Contains(t, h, `<A HREF="https://t.example/c/tok1">again</A>`, "the tag keeps its spelling")
	require.Contains(t, h, `<a href="https://t.example/c/tok2">blog</a>`)
	require.Contains(t, h, `<area href="https://t.example/c/tok3" alt="map">`)
	for _, kept := range []string{`href="mailto:help@example.com"`, `href="tel:+123"`, `href="#top"`, `href="/relative"`,
		`href="https://x.example/?e=ann%40example.org"`, `href="https://t.example/u/unsub"`, `href="https://t.example/v/view"`} {
		require.Contains(t, h, kept)
	}
	require.NotContains(t, h, "shop.example", "a tracked URL must not stay in the body")
	// The honeypot and the pixel come before </body>, hidden.
	end := strings.Index(h, "</body>")
	hp := strings.Index(h, `href="https://t.example/c/tok0"`)
	px := strings.Index(h, `src="https://t.example/o/px"`)
	require.True(t, hp > 0 && hp < end && px > hp && px < end, h)
	require.Contains(t, h, `aria-hidden="true" tabindex="-1"></a>`)
	require.Equal(t, "t", m.Text, "the text part is not rewritten")
}

func TestBuildWithoutTrackingLeavesTheBodyAlone(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		track bool
		links render.Links
	}{
		{"campaign not tracking, click func given", false, render.Links{Click: func(int) string { return "x" }}},
		{"campaign tracking, no click func", true, render.Links{}},
	} {
		p, err := render.NewRandomBuilder().Prepare(render.Campaign{TrackClicks: c.track, FromEmail: "a@example.com",
			Subject: "s", HTML: `<p><a href="https://a.example/">a</a></p>`})
		require.NoError(t, err)
		m, err := p.Build(render.Recipient{JobID: "j", Email: "b@example.org"}, c.links)
		require.NoError(t, err)
		require.Equal(t, `<p><a href="https://a.example/">a</a></p>`, m.HTML, c.name)
	}
}

func TestRenderArchiveHasNoRecipientFields(t *testing.T) {
	t.Parallel()
	tpl, err := render.Parse("News for {{if .Archive}}readers{{else}}{{.Name}}{{end}}",
		`<p>{{if .Archive}}Hello reader{{else}}Hello {{.Name}} ({{.Email}}, {{.Attributes.city}}){{end}}</p>`, "{{.Email}}")
	require.NoError(t, err)
	r, err := tpl.RenderArchive()
	require.NoError(t, err)
	require.Equal(t, "News for readers", r.Subject)
	require.Equal(t, "<p>Hello reader</p>", r.HTML)
	require.Equal(t, "", r.Text)
}

// The rewrite reads hrefs as the HTML tokenizer does, whatever the quoting, and
// leaves comments, scripts, styles and look-alike attributes alone.
func TestTrackRewritesHrefsAsTheTokenizerReadsThem(t *testing.T) {
	t.Parallel()
	const u = "https://a.example/x?p=1&q=2"
	for _, c := range []struct{ in, want string }{
		{`<a href="https://a.example/x?p=1&amp;q=2">x</a>`, `<a href="C1">x</a>`},
		{`<a href='https://a.example/x?p=1&q=2'>x</a>`, `<a href='C1'>x</a>`},
		{`<a href=https://a.example/x?p=1&amp;q=2>x</a>`, `<a href=C1>x</a>`},
		{`<a title="a > b" data-href="` + u + `" HREF = "` + u + `" >x</a>`, `<a title="a > b" data-href="` + u + `" HREF = "C1" >x</a>`},
		{`<a href="` + u + `" href="https://b.example/">x</a>`, `<a href="C1" href="https://b.example/">x</a>`},
		{`<abbr href="` + u + `">x</abbr>`, `<abbr href="` + u + `">x</abbr>`},
		{`<!-- <a href="` + u + `"> --><a href="` + u + `">x</a>`, `<!-- <a href="` + u + `"> --><a href="C1">x</a>`},
		{`<script>"<a href='` + u + `'>"</script><style>a{}</style><a href="` + u + `">x</a>`,
			`<script>"<a href='` + u + `'>"</script><style>a{}</style><a href="C1">x</a>`},
		{`<a href="` + u + `"`, `<a href="C1"`},
		{`<a href="` + u, `<a href="` + u},
	} {
		p, err := render.NewRandomBuilder().Prepare(render.Campaign{TrackClicks: true, FromEmail: "a@example.com",
			Subject: "s", HTML: `<a href="https://a.example/x?p=1&amp;q=2">x</a>`})
		require.NoError(t, err)
		got := render.TrackForTest(p, c.in, func(i int) string { return "C" + strconv.Itoa(i) })
		require.Equal(t, c.want+honeypotFor("C0"), got, c.in)
	}
}

func honeypotFor(u string) string {
	return `<a href="` + u + `" style="display:none;max-height:0;overflow:hidden;mso-hide:all" aria-hidden="true" tabindex="-1"></a>`
}

// FuzzTrack: the hand-written rewrite never panics on any body, always adds the
// honeypot to a non-empty one (before a </body> it found), and changes nothing but href values
// that name the tracked URL: with a click URL equal to the URL itself, the body
// comes back as it was, plus the honeypot.
func FuzzTrack(f *testing.F) {
	f.Add(`<html><body><a href="https://a.example/">x</a></body></html>`)
	f.Add(`<a href='https://a.example/' <!-- <script>`)
	f.Add(`<A HREF=https://a.example/>`)
	f.Add(`<area href="https://a.example/"/><a`)
	p, err := render.NewRandomBuilder().Prepare(render.Campaign{TrackClicks: true, FromEmail: "a@example.com",
		Subject: "s", HTML: `<a href="https://a.example/">x</a>`})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, body string) {
		same := render.TrackForTest(p, body, func(i int) string {
			if i == 0 {
				return "HP"
			}
			return "https://a.example/"
		})
		if body == "" {
			require.Empty(t, same, "no HTML part: nothing to add to")
			return
		}
		require.Contains(t, same, honeypotFor("HP"))
		// Character references in a rewritten value come back decoded.
		require.Equal(t, html.UnescapeString(body), html.UnescapeString(strings.Replace(same, honeypotFor("HP"), "", 1)))
	})
}
