package message_test

import (
	"net/mail"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/message"
	"github.com/sendonce/sendonce/internal/provider"
)

func TestBuild(t *testing.T) {
	t.Parallel()
	c := message.Campaign{FromEmail: "news@Example.COM", FromName: "Example News", ReplyTo: "help@example.com"}
	r := message.Recipient{JobID: "campaign:12:345", Email: "ada@example.org", Name: "Ada"}
	rendered := message.Rendered{Subject: "Hi Ada", HTML: "<p>Hi</p>", Text: "Hi"}

	for _, tc := range []struct {
		name    string
		links   message.Links
		headers []provider.Header
	}{
		{
			name:  "https and mailto address",
			links: message.Links{HTTPS: "https://x.test/u/TOK", Mailto: "unsub@example.com"},
			headers: []provider.Header{
				{Name: "List-Unsubscribe", Value: "<https://x.test/u/TOK>, <mailto:unsub@example.com?subject=unsubscribe>"},
				{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
			},
		},
		{
			name:  "mailto given as a URI is kept",
			links: message.Links{HTTPS: "https://x.test/u/TOK", Mailto: "mailto:u@example.com?subject=stop"},
			headers: []provider.Header{
				{Name: "List-Unsubscribe", Value: "<https://x.test/u/TOK>, <mailto:u@example.com?subject=stop>"},
				{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
			},
		},
		{
			name:  "https only",
			links: message.Links{HTTPS: "https://x.test/u/TOK"},
			headers: []provider.Header{
				{Name: "List-Unsubscribe", Value: "<https://x.test/u/TOK>"},
				{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
			},
		},
		{
			name:    "mailto only: no one-click",
			links:   message.Links{Mailto: "unsub@example.com"},
			headers: []provider.Header{{Name: "List-Unsubscribe", Value: "<mailto:unsub@example.com?subject=unsubscribe>"}},
		},
		{name: "no links", links: message.Links{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := message.Build(c, r, rendered, tc.links)
			require.Equal(t, provider.Message{
				JobID: "campaign:12:345", MessageID: "campaign.12.345@example.com",
				From: "news@Example.COM", FromName: "Example News", ReplyTo: "help@example.com",
				To: "ada@example.org", ToName: "Ada", Subject: "Hi Ada", HTML: "<p>Hi</p>", Text: "Hi",
				Headers: tc.headers,
			}, m)
		})
	}
}

func TestMessageID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ job, from, want string }{
		{"campaign:1:2", "a@example.com", "campaign.1.2@example.com"},
		{"campaign:1:2", "a@Mail.Example.com", "campaign.1.2@mail.example.com"},
		{"campaign:1:2", "no-domain", "campaign.1.2@sendonce.invalid"},
		{"campaign:1:2", "a@[127.0.0.1]", "campaign.1.2@sendonce.invalid"},
		// Job ids that are not dot-atoms once ':' became '.' are hashed.
		{"odd job id", "a@example.com", "job.hash@example.com"},
		{"a::b", "a@example.com", "job.hash@example.com"},
	} {
		got := message.MessageID(tc.job, tc.from)
		if tc.want == "job.hash@example.com" {
			require.Regexp(t, `^job\.[0-9a-f]{32}@example\.com$`, got)
		} else {
			require.Equal(t, tc.want, got, "%+v", tc)
		}
		// Always a legal msg-id (dot-atom "@" dot-atom, which net/mail parses as an
		// address) and deterministic.
		_, err := mail.ParseAddress("<" + got + ">")
		require.NoError(t, err, got)
		require.Equal(t, got, message.MessageID(tc.job, tc.from))
	}
	require.NotEqual(t, message.MessageID("campaign:1:2", "a@x.com"), message.MessageID("campaign:1:3", "a@x.com"))
}

func TestCompose(t *testing.T) {
	t.Parallel()
	tpl, err := message.Parse("Hi {{.Name}}", `<a href="{{.UnsubscribeURL}}">stop</a> {{.Attributes.plan}}`, "{{.Email}} {{.UnsubscribeURL}}")
	require.NoError(t, err)
	m, err := message.Builder{}.Compose(tpl, message.Campaign{FromEmail: "n@example.com"},
		message.Recipient{JobID: "campaign:1:2", Email: "ada@example.org", Name: "Ada"},
		map[string]any{"plan": "pro"}, message.Links{HTTPS: "https://x.test/u/T"})
	require.NoError(t, err)
	require.Equal(t, "Hi Ada", m.Subject)
	require.Equal(t, `<a href="https://x.test/u/T">stop</a> pro`, m.HTML)
	require.Equal(t, "ada@example.org https://x.test/u/T", m.Text)
	require.Equal(t, "<https://x.test/u/T>", m.Headers[0].Value)
	require.Equal(t, "campaign.1.2@example.com", m.MessageID)
}

func FuzzMessageID(f *testing.F) {
	f.Add("campaign:1:2", "a@example.com")
	f.Add("a..b", "x@[1.2.3.4]")
	f.Add("ünï:cøde", "ü@bücher.de")
	f.Fuzz(func(t *testing.T, job, from string) {
		got := message.MessageID(job, from)
		_, err := mail.ParseAddress("<" + got + ">")
		require.NoError(t, err, "%q %q → %q", job, from, got)
		require.Equal(t, got, message.MessageID(job, from))
	})
}

func TestComposeRefusesAnEmptyBody(t *testing.T) {
	t.Parallel()
	tpl, err := message.Parse("Hi", "{{if .Name}}x{{end}}", " ")
	require.NoError(t, err)
	_, err = message.Builder{}.Compose(tpl, message.Campaign{FromEmail: "n@example.com"},
		message.Recipient{JobID: "campaign:1:2", Email: "a@example.org"}, nil, message.Links{})
	require.True(t, apperr.Is(err, apperr.Invalid), "%v", err)
}

func TestKeyedMessageID(t *testing.T) {
	t.Parallel()
	b := message.Builder{MessageIDKey: []byte("k1")}
	id := b.MessageID("campaign:1:2", "n@Example.com")
	require.Regexp(t, `^[a-z2-7]{26}@example\.com$`, id)
	require.Equal(t, id, b.MessageID("campaign:1:2", "n@example.com"), "deterministic")
	require.NotEqual(t, id, b.MessageID("campaign:1:3", "n@example.com"))
	require.NotEqual(t, id, message.Builder{MessageIDKey: []byte("k2")}.MessageID("campaign:1:2", "n@example.com"))
	m := b.Build(message.Campaign{FromEmail: "n@example.com"}, message.Recipient{JobID: "campaign:1:2"},
		message.Rendered{}, message.Links{})
	require.Equal(t, id, m.MessageID)
	_, err := mail.ParseAddress("<" + id + ">")
	require.NoError(t, err)
}
