package render

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
)

// TestTemplateErrorsNameTheirLine: a template that does not parse, is refused by the
// bounds, or fails to execute names the line it is on in its field error, for each
// part; an error about no line (too large) names none.
func TestTemplateErrorsNameTheirLine(t *testing.T) {
	t.Parallel()
	fieldOf := func(err error) apperr.FieldError {
		t.Helper()
		var e *apperr.Error
		require.True(t, errors.As(err, &e), "%v", err)
		require.Len(t, e.Fields, 1)
		return e.Fields[0]
	}
	for _, c := range []struct {
		subject, html, text string
		pointer             string
		line                int
	}{
		{"Hi {{.Name", "<p>x</p>", "x", "/subject", 1},
		{"Hi", "<p>a</p>\n<p>{{.Attributes.plan</p>", "x", "/html_template", 2},
		{"Hi", "<p>a</p>", "one\ntwo\nthree {{if}}", "/text_template", 3},
		{"Hi", "<p>a</p>\n\n\n<p>{{env \"HOME\"}}</p>", "x", "/html_template", 4}, // not allowed: the bounds' walk
		{"Hi", "<p>a</p>", "a\n{{range 100000000}}x{{end}}", "/text_template", 2}, // too many iterations
		{"Hi", "<p>a</p>", "a\nb\n{{template \"x\"}}", "/text_template", 3},       // {{template}}
	} {
		_, err := Parse(c.subject, c.html, c.text)
		require.Error(t, err, "%+v", c)
		f := fieldOf(err)
		require.Equal(t, c.pointer, f.Pointer, f.Detail)
		if c.line > 0 {
			require.Equal(t, c.line, f.Line, f.Detail)
		}
	}
	// Executing: the error is found at render time, on its line.
	tpl, err := Parse("Hi", "<p>a</p>", "a\nb\n{{index .Attributes.list 5}}")
	require.NoError(t, err)
	r := Sample
	r.Attributes = []byte(`{"list":[1]}`)
	_, err = tpl.Render(r, SampleUnsubscribeURL)
	require.Error(t, err)
	f := fieldOf(err)
	require.Equal(t, "/text_template", f.Pointer)
	require.Equal(t, 3, f.Line, f.Detail)

	require.Equal(t, 0, errorLine("html", "html template renders more than 10 bytes"))
	require.Equal(t, 0, errorLine("text", "context: texts:3: no"), "another name's line is not this one's")
	require.Equal(t, 12, errorLine("html", "html template html/template:html:12:4: bad"))
}
