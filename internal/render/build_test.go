package render_test

import (
	"net/mail"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
)

// testKey is a fixed Message-ID key, so expected ids can be written down.
var testKey = []byte("message-id-key-0123456789abcdef")

func newBuilder(t testing.TB) *render.Builder {
	t.Helper()
	b, err := render.NewBuilder(testKey)
	require.NoError(t, err)
	return b
}

func prepare(t testing.TB, c render.Campaign) *render.Prepared {
	t.Helper()
	p, err := newBuilder(t).Prepare(c)
	require.NoError(t, err)
	return p
}

func TestBuildHeaders(t *testing.T) {
	t.Parallel()
	p := prepare(t, render.Campaign{FromEmail: "news@Example.COM", FromName: "Example News", ReplyTo: "help@example.com",
		Subject: "Hi {{.Name}}", HTML: "<p>Hi</p>", Text: "Hi"})
	r := render.Recipient{JobID: "campaign:12:345", Email: "ada@example.org", Name: "Ada"}
	for _, tc := range []struct {
		name    string
		links   render.Links
		headers []provider.Header
	}{
		{
			name:  "https and mailto address",
			links: render.Links{HTTPS: "https://x.test/u/TOK", Mailto: "unsub@example.com"},
			headers: []provider.Header{
				{Name: "List-Unsubscribe", Value: "<https://x.test/u/TOK>, <mailto:unsub@example.com?subject=unsubscribe>"},
				{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
			},
		},
		{
			name:  "mailto given as a URI is kept",
			links: render.Links{HTTPS: "https://x.test/u/TOK", Mailto: "mailto:u@example.com?subject=stop"},
			headers: []provider.Header{
				{Name: "List-Unsubscribe", Value: "<https://x.test/u/TOK>, <mailto:u@example.com?subject=stop>"},
				{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
			},
		},
		{
			name:  "https only",
			links: render.Links{HTTPS: "https://x.test/u/TOK"},
			headers: []provider.Header{
				{Name: "List-Unsubscribe", Value: "<https://x.test/u/TOK>"},
				{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
			},
		},
		{
			name:    "mailto only: no one-click",
			links:   render.Links{Mailto: "unsub@example.com"},
			headers: []provider.Header{{Name: "List-Unsubscribe", Value: "<mailto:unsub@example.com?subject=unsubscribe>"}},
		},
		{name: "no links", links: render.Links{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := p.Build(r, tc.links)
			require.NoError(t, err)
			require.Equal(t, provider.Message{
				// Pinned: a change of the Message-ID derivation changes this string.
				JobID: "campaign:12:345", MessageID: "vfl3fheawllc3kxo55llbtivq7@example.com",
				From: "news@Example.COM", FromName: "Example News", ReplyTo: "help@example.com",
				To: "ada@example.org", ToName: "Ada", Subject: "Hi Ada", HTML: "<p>Hi</p>", Text: "Hi",
				Headers: tc.headers,
			}, m)
		})
	}
}

func TestMessageID(t *testing.T) {
	t.Parallel()
	b := newBuilder(t)
	id := b.MessageID("campaign:7:140", "n@Example.com")
	require.Regexp(t, `^[a-z2-7]{26}@example\.com$`, id)
	require.NotContains(t, id, "140", "no subscriber id in the Message-ID")
	require.Equal(t, id, b.MessageID("campaign:7:140", "n@example.com"), "deterministic per job id (a replay reuses it)")
	require.Equal(t, id, newBuilder(t).MessageID("campaign:7:140", "n@example.com"), "the same key in another process")
	require.NotEqual(t, id, b.MessageID("campaign:7:141", "n@example.com"))
	other, err := render.NewBuilder([]byte("another-key-0123456789abcdef"))
	require.NoError(t, err)
	require.NotEqual(t, id, other.MessageID("campaign:7:140", "n@example.com"), "the key decides")
	for _, tc := range []struct{ from, domain string }{
		{"a@Mail.Example.com", "@mail.example.com"},
		{"no-domain", "@sendonce.invalid"},
		{"a@[127.0.0.1]", "@sendonce.invalid"},
		{"a@x..y", "@sendonce.invalid"},
	} {
		require.Regexp(t, `^[a-z2-7]{26}`+tc.domain+`$`, b.MessageID("campaign:1:2", tc.from), tc.from)
	}
	_, err = render.NewBuilder([]byte("short"))
	require.Error(t, err)
}

func FuzzMessageID(f *testing.F) {
	f.Add("campaign:1:2", "a@example.com")
	f.Add("a..b", "x@[1.2.3.4]")
	f.Add("ünï:cøde", "ü@bücher.de")
	b := newBuilder(f)
	f.Fuzz(func(t *testing.T, job, from string) {
		got := b.MessageID(job, from)
		_, err := mail.ParseAddress("<" + got + ">")
		require.NoError(t, err, "%q %q → %q", job, from, got)
		require.Equal(t, got, b.MessageID(job, from))
	})
}

func TestBuildRendersPerRecipient(t *testing.T) {
	t.Parallel()
	p := prepare(t, render.Campaign{FromEmail: "n@example.com", Subject: "Hi {{.Name}}",
		HTML: `<a href="{{.UnsubscribeURL}}">stop</a> {{.Attributes.plan}}`, Text: "{{.Email}} {{.UnsubscribeURL}}"})
	m, err := p.Build(render.Recipient{JobID: "campaign:1:2", Email: "ada@example.org", Name: "Ada",
		Attributes: []byte(`{"plan":"pro"}`)}, render.Links{HTTPS: "https://x.test/u/T"})
	require.NoError(t, err)
	require.Equal(t, "Hi Ada", m.Subject)
	require.Equal(t, `<a href="https://x.test/u/T">stop</a> pro`, m.HTML)
	require.Equal(t, "ada@example.org https://x.test/u/T", m.Text)
	require.Equal(t, "<https://x.test/u/T>", m.Headers[0].Value)
}

// A whitespace-only body is refused the same way for every caller of Build
// (campaign sends and test sends alike).
func TestBuildRefusesABlankBody(t *testing.T) {
	t.Parallel()
	for _, c := range []render.Campaign{
		{Subject: "Hi", HTML: "{{if .Name}}x{{end}}", Text: " "},
		{Subject: "Hi", HTML: " \n\t", Text: "{{.Name}}"},
		{Subject: "Hi", HTML: "", Text: ""},
	} {
		c.FromEmail = "n@example.com"
		_, err := prepare(t, c).Build(render.Recipient{JobID: "campaign:1:2", Email: "a@example.org"}, render.Links{})
		require.True(t, apperr.Is(err, apperr.Invalid), "%+v: %v", c, err)
	}
}

func TestAttributesAreDecodedOnlyWhenUsed(t *testing.T) {
	t.Parallel()
	// Attributes that are not JSON fail only a template that reads them.
	bad := render.Recipient{JobID: "campaign:1:2", Email: "a@example.org", Name: "Ada", Attributes: []byte("not json")}
	_, err := prepare(t, render.Campaign{Subject: "Hi", Text: "{{.Name}}"}).Build(bad, render.Links{})
	require.NoError(t, err)
	_, err = prepare(t, render.Campaign{Subject: "Hi", Text: "{{.Attributes.x}}"}).Build(bad, render.Links{})
	require.Error(t, err)
	_, err = prepare(t, render.Campaign{Subject: "Hi", Text: "{{printf \"%v\" .}}"}).Build(bad, render.Links{})
	require.Error(t, err, "a bare {{.}} can reach the attributes")
}
