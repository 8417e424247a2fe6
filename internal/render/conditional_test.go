package render_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/render"
)

// Outlook's conditional comments survive html/template (which drops other
// comments), in static, plain and executed HTML alike, while what they enclose is
// still escaped and a recipient's data cannot spell one.
func TestConditionalCommentsKept(t *testing.T) {
	t.Parallel()
	const ghostOpen = `<!--[if mso | IE]><table role="presentation" width="600"><tr><td><![endif]-->`
	const ghostClose = `<!--[if mso | IE]></td></tr></table><![endif]-->`
	for name, tc := range map[string]struct{ html, want string }{
		"static": {ghostOpen + `<p>x<!-- dropped --></p>` + ghostClose,
			ghostOpen + `<p>x</p>` + ghostClose},
		"plain": {ghostOpen + `<p>{{.Name}}</p>` + ghostClose,
			ghostOpen + `<p>sendoncecc0z &lt;b&gt;</p>` + ghostClose},
		"executed": {ghostOpen + `{{if .Name}}<a href="{{.Attributes.u}}">{{.Name}}</a>{{end}}<!--[if !mso]><!--><i>web</i><!--<![endif]-->` + ghostClose,
			ghostOpen + `<a href="#ZgotmplZ">sendoncecc0z &lt;b&gt;</a><!--[if !mso]><!--><i>web</i><!--<![endif]-->` + ghostClose},
	} {
		t.Run(name, func(t *testing.T) {
			tpl, err := render.Parse("s", tc.html, "t")
			require.NoError(t, err)
			for range 3 { // the pooled renderer is reused
				r, err := tpl.Render(render.Recipient{Name: "sendoncecc0z <b>", Attributes: []byte(`{"u":"javascript:alert(1)"}`)}, "https://x.test/u")
				require.NoError(t, err)
				require.Equal(t, tc.want, r.HTML)
			}
		})
	}
}
