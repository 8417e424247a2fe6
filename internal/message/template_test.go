package message_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/message"
)

func TestRender(t *testing.T) {
	t.Parallel()
	tpl, err := message.Parse("Hi {{.Name}}\n!", `<p>{{.Name}} on {{.Attributes.plan}}</p><a href="{{.UnsubscribeURL}}">x</a>`,
		"Plan: {{.Attributes.plan}}{{.Attributes.missing}}")
	require.NoError(t, err)
	r, err := tpl.Render(message.Recipient{Email: "a@b.co", Name: "<Ada>", Attributes: []byte(`{"plan":"pro"}`)}, "https://x.test/u/t")
	require.NoError(t, err)
	require.Equal(t, "Hi <Ada> !", r.Subject)
	require.Equal(t, `<p>&lt;Ada&gt; on pro</p><a href="https://x.test/u/t">x</a>`, r.HTML)
	require.Equal(t, "Plan: pro", r.Text)
}

func TestRenderStaticParts(t *testing.T) {
	t.Parallel()
	// Action-free parts are rendered once, with html/template's own rewriting
	// (it drops HTML comments), and reused for every recipient.
	tpl, err := message.Parse("Weekly\nnews", "<p>x<!-- hidden --></p>", "plain")
	require.NoError(t, err)
	for range 2 {
		r, err := tpl.Render(message.Recipient{Name: "Ada"}, "https://x.test/u/t")
		require.NoError(t, err)
		require.Equal(t, message.Rendered{Subject: "Weekly news", HTML: "<p>x</p>", Text: "plain"}, r)
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
		err := message.Validate(tc.subject, tc.html, tc.text)
		require.Error(t, err)
		require.True(t, apperr.Is(err, apperr.Invalid))
		require.Equal(t, tc.pointer, err.(*apperr.Error).Fields[0].Pointer, "%+v", tc)
	}
	require.NoError(t, message.Validate("Hi {{.Name}}", "<b>{{.Attributes.x}}</b>", "{{.UnsubscribeURL}}"))
}
