package render_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/render"
)

func TestRender(t *testing.T) {
	t.Parallel()
	tpl, err := render.Parse("Hi {{.Name}}\n!", `<p>{{.Name}} on {{.Attributes.plan}}</p><a href="{{.UnsubscribeURL}}">x</a>`,
		"Plan: {{.Attributes.plan}}{{.Attributes.missing}}")
	require.NoError(t, err)
	r, err := tpl.Render(render.Recipient{Email: "a@b.co", Name: "<Ada>", Attributes: []byte(`{"plan":"pro"}`)}, "https://x.test/u/t")
	require.NoError(t, err)
	require.Equal(t, "Hi <Ada> !", r.Subject)
	require.Equal(t, `<p>&lt;Ada&gt; on pro</p><a href="https://x.test/u/t">x</a>`, r.HTML)
	require.Equal(t, "Plan: pro", r.Text)
}

func TestRenderStaticParts(t *testing.T) {
	t.Parallel()
	// Action-free parts are rendered once, with html/template's own rewriting
	// (it drops HTML comments), and reused for every recipient.
	tpl, err := render.Parse("Weekly\nnews", "<p>x<!-- hidden --></p>", "plain")
	require.NoError(t, err)
	for range 2 {
		r, err := tpl.Render(render.Recipient{Name: "Ada"}, "https://x.test/u/t")
		require.NoError(t, err)
		require.Equal(t, render.Rendered{Subject: "Weekly news", HTML: "<p>x</p>", Text: "plain"}, r)
	}
}

func TestValidateNamesTheTemplate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ subject, html, text, pointer string }{
		{"{{.Name", "", "", "/subject"},
		{"ok", "{{if}}", "", "/html_template"},
		{"ok", "", "{{.Nope}}", "/text_template"},
		{"ok", "{{.Email.Foo}}", "", "/html_template"},
	} {
		err := render.Validate(tc.subject, tc.html, tc.text)
		require.Error(t, err)
		require.True(t, apperr.Is(err, apperr.Invalid))
		require.Equal(t, tc.pointer, err.(*apperr.Error).Fields[0].Pointer, "%+v", tc)
	}
	require.NoError(t, render.Validate("Hi {{.Name}}", "<b>{{.Attributes.x}}</b>", "{{.UnsubscribeURL}}"))
}

// Renders run concurrently on one Templates (each borrows its own clones); run
// with -race.
func TestRenderConcurrently(t *testing.T) {
	t.Parallel()
	tpl, err := render.Parse("Hi {{.Name}}", `{{range $i, $e := .Attributes.l}}<p>{{$e}} {{$.Name}}</p>{{end}}`, "{{.Name}}")
	require.NoError(t, err)
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			var err error
			for i := range 50 {
				name := fmt.Sprintf("n%d-%d", g, i)
				var r render.Rendered
				r, err = tpl.Render(render.Recipient{Name: name, Attributes: []byte(`{"l":["a","b"]}`)}, "")
				if err == nil && r.HTML != "<p>a "+name+"</p><p>b "+name+"</p>" {
					err = fmt.Errorf("got %q", r.HTML)
				}
				if err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
}
