package layout

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/leaktest"
	"github.com/sendonce/sendonce/internal/markdown"
	"github.com/sendonce/sendonce/internal/store"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// TestFrame: the body goes at {{content}}, the header just before it and the
// footer just after it unless the frame places them with {{header}} and
// {{footer}}; brand tokens read the layout's colours or their defaults; the text
// frame, when there is one, takes the text body; no layout leaves the body as it is.
func TestFrame(t *testing.T) {
	t.Parallel()
	body, text := "<p>Hi {{.Name}}</p>", "Hi {{.Name}}"
	for _, c := range []struct {
		name       string
		l          *store.Layout
		html, text string
	}{
		{"no layout", nil, body, text},
		{"bare frame", &store.Layout{Html: "<div>{{content}}</div>"}, "<div>" + body + "</div>", text},
		{"header and footer around the body", &store.Layout{Html: "<div>{{content}}</div>", Header: "<h1>H</h1>", Footer: "<small>F</small>"},
			"<div><h1>H</h1>" + body + "<small>F</small></div>", text},
		{"placed header and footer", &store.Layout{Html: "{{footer}}<main>{{content}}</main>{{header}}", Header: "<h1>H</h1>", Footer: "<small>F</small>"},
			"<small>F</small><main>" + body + "</main><h1>H</h1>", text},
		{"only a footer token", &store.Layout{Html: "<main>{{content}}</main>{{footer}}", Header: "H", Footer: "F"},
			"<main>H" + body + "</main>F", text},
		{"text frame", &store.Layout{Html: "{{content}}", Text: "Dear reader,\n{{content}}\n-- ACME"}, body, "Dear reader,\n" + text + "\n-- ACME"},
		{"brand colours and their defaults", &store.Layout{Html: `<div style="background:{{brand.background}};color:{{brand.text}}">{{header}}{{content}}</div>`,
			Header: `<h1 style="color:{{brand.primary}}">H</h1><a style="color:{{brand.link}}">x</a>`, BrandPrimary: "#0b6e4f", BrandText: "#101010"},
			`<div style="background:#ffffff;color:#101010"><h1 style="color:#0b6e4f">H</h1><a style="color:#1a56db">x</a>` + body + `</div>`, text},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			html, txt := frame(c.l, body, text)
			require.Equal(t, c.html, html)
			require.Equal(t, c.text, txt)
		})
	}
}

// TestFrameBodyIsNotReadAsTokens: a body that holds the layout's tokens is put in
// last, as it is: its {{content}}, {{footer}} and {{brand.*}} stay text.
func TestFrameBodyIsNotReadAsTokens(t *testing.T) {
	t.Parallel()
	l := &store.Layout{Html: "<div>{{content}}</div>", Footer: "<p>F</p>", BrandPrimary: "#123456"}
	body := "<p>{{content}} {{footer}} {{header}} {{brand.primary}}</p>"
	html, _ := frame(l, body, "")
	require.Equal(t, "<div>"+body+"<p>F</p></div>", html)
}

// TestCheckAccepts: layouts that frame content are accepted, with the header and
// footer placed or not, template actions and brand tokens in every part.
func TestCheckAccepts(t *testing.T) {
	t.Parallel()
	for _, l := range []store.Layout{
		{Name: "plain", Html: "{{content}}"},
		{Name: "framed", Html: `<div style="color:{{brand.text}}">{{header}}{{content}}{{footer}}</div>`, Text: "{{content}}\n--\nACME",
			Header: `<h1 style="color:{{brand.primary}}">{{.Name}}</h1>`, Footer: `<a href="{{.UnsubscribeURL}}">Unsubscribe</a>`, BrandPrimary: "#0b6e4f"},
		{Name: "footer only", Html: "<main>{{content}}</main>", Footer: "<p>{{if .Archive}}Archived{{else}}Hello {{.Email}}{{end}}</p>"},
	} {
		require.NoError(t, check(l), l.Name)
	}
}

// TestCheckRefuses: a layout that cannot frame content is an invalid-input error
// naming the layout's field, and its text names the field too, never the "html
// template" render checked it as.
func TestCheckRefuses(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", markdown.MaxBytes+1)
	ok := store.Layout{Name: "l", Html: "<div>{{content}}</div>"}
	with := func(f func(*store.Layout)) store.Layout { l := ok; f(&l); return l }
	for _, c := range []struct {
		name    string
		l       store.Layout
		pointer string
		says    string
	}{
		{"empty name", with(func(l *store.Layout) { l.Name = " " }), "/name", "name must be"},
		{"long name", with(func(l *store.Layout) { l.Name = strings.Repeat("n", 201) }), "/name", "name must be"},
		{"no content token", with(func(l *store.Layout) { l.Html = "<div></div>" }), "/html", "exactly once (found 0)"},
		{"two content tokens", with(func(l *store.Layout) { l.Html = "{{content}}{{content}}" }), "/html", "exactly once (found 2)"},
		{"text without the token", with(func(l *store.Layout) { l.Text = "Hello" }), "/text", "text must be empty or contain"},
		{"two header tokens", with(func(l *store.Layout) { l.Html = "{{header}}{{content}}{{header}}" }), "/html", "{{header}} at most once"},
		{"two footer tokens", with(func(l *store.Layout) { l.Html = "{{footer}}{{content}}{{footer}}" }), "/html", "{{footer}} at most once"},
		{"html too long", with(func(l *store.Layout) { l.Html = "{{content}}" + big }), "/html", "at most"},
		{"header too long", with(func(l *store.Layout) { l.Header = big }), "/header", "header is at most"},
		{"footer too long", with(func(l *store.Layout) { l.Footer = big }), "/footer", "footer is at most"},
		{"token in the header", with(func(l *store.Layout) { l.Header = "<p>{{content}}</p>" }), "/header", "header is a fragment"},
		{"token in the footer", with(func(l *store.Layout) { l.Footer = "{{header}}" }), "/footer", "footer is a fragment"},
		{"header does not parse", with(func(l *store.Layout) { l.Header = "<p>{{.Nope</p>" }), "/header", "header does not parse: header:1:"},
		{"footer does not parse", with(func(l *store.Layout) { l.Footer = `{{env "HOME"}}` }), "/footer", "footer does not parse"},
		{"footer does not execute", with(func(l *store.Layout) { l.Footer = "<p>\n{{.Nope.Deeper}}</p>" }), "/footer", "footer does not execute: footer:2:"},
		{"frame does not parse", with(func(l *store.Layout) { l.Html = "<div>{{if .Name}}{{content}}</div>" }), "/html", "html does not parse"},
		{"text frame does not parse", with(func(l *store.Layout) { l.Text = "{{content}} {{.Name" }), "/text", "text does not parse"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := check(c.l)
			var e *apperr.Error
			require.True(t, errors.As(err, &e), "%v", err)
			require.Equal(t, apperr.Invalid, e.Code)
			require.Len(t, e.Fields, 1, "%v", e)
			require.Equal(t, c.pointer, e.Fields[0].Pointer, "%v", e)
			require.Contains(t, e.Message, c.says)
			require.Contains(t, e.Message, c.pointer[1:], "the text names the field")
			require.NotContains(t, e.Message, "template ", "the text names the layout's field, not render's template")
			require.Equal(t, e.Message, e.Fields[0].Detail)
			if strings.Contains(c.says, ":2:") {
				require.Equal(t, 2, e.Fields[0].Line, "the line is the fragment's own")
			}
		})
	}
}

// TestColours: brand colours are #rrggbb, lower-cased; empty takes one away; a
// bad one is refused naming it under /brand.
func TestColours(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	f := Fields{BrandPrimary: s("#0B6E4F"), BrandBackground: s(""), BrandLink: nil}
	require.NoError(t, colours(&f))
	require.Equal(t, "#0b6e4f", *f.BrandPrimary)
	require.Equal(t, "", *f.BrandBackground)
	for ptr, bad := range map[string]Fields{
		"/brand/primary":    {BrandPrimary: s("red")},
		"/brand/background": {BrandBackground: s("#fff")},
		"/brand/text":       {BrandText: s("#12345g")},
		"/brand/link":       {BrandLink: s("#1234567")},
	} {
		err := colours(&bad)
		var e *apperr.Error
		require.True(t, errors.As(err, &e), "%s: %v", ptr, err)
		require.Equal(t, ptr, e.Fields[0].Pointer)
	}
}
