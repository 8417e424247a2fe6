package provider

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wneessen/go-mail"
)

// goMailMIME is how the SMTP provider built a message before it assembled the
// bytes itself (go-mail v0.8.1, one Msg per recipient), with the date and the
// multipart boundary fixed so that the bytes can be compared.
func goMailMIME(t testing.TB, m Message, date time.Time, boundary string) []byte {
	t.Helper()
	msg := mail.NewMsg(mail.WithNoDefaultUserAgent(), mail.WithBoundary(boundary))
	msg.FromMailAddress(&netmail.Address{Name: m.FromName, Address: m.From})
	msg.ToMailAddress(&netmail.Address{Name: m.ToName, Address: m.To})
	if m.ReplyTo != "" {
		msg.ReplyToMailAddress(&netmail.Address{Address: m.ReplyTo})
	}
	msg.Subject(m.Subject)
	if m.MessageID != "" {
		msg.SetMessageIDWithValue(m.MessageID)
	}
	msg.SetDateWithValue(date)
	for _, h := range m.Headers {
		msg.SetGenHeader(mail.Header(h.Name), h.Value)
	}
	switch {
	case m.Text != "" && m.HTML != "":
		msg.SetBodyString(mail.TypeTextPlain, m.Text)
		msg.AddAlternativeString(mail.TypeTextHTML, m.HTML)
	case m.HTML != "":
		msg.SetBodyString(mail.TypeTextHTML, m.HTML)
	default:
		msg.SetBodyString(mail.TypeTextPlain, m.Text)
	}
	var b bytes.Buffer
	_, err := msg.WriteTo(&b)
	require.NoError(t, err)
	return b.Bytes()
}

// randomText draws a string from pieces that exercise the encoders: non-ASCII,
// every kind of line break, lines starting with a dot, trailing blanks, '=',
// control bytes, long words and long lines.
func randomText(r *rand.Rand, maxPieces int) string {
	pieces := []string{"a", "word ", "Ada", " ", "  ", "\t", "=", "==", ".", "\r\n.", "\n.", "\r\n", "\n", "\r",
		"\n\r", "\r\r\n", " \r\n", "\t\n", "é", "Ünïcødé ", "日本語", "😀", "\x00", "\x7f", "\x01", "=?utf-8?q?x?=",
		"\"quoted\"", "<b>bold</b>", "https://example.com/u/AQJrMQECAwCM-9SXBa-OuJyBTcSN2gUoHdPryfTZkCC",
		strings.Repeat("x", 70), strings.Repeat("y", 80), strings.Repeat("é", 40), "line \n", "end.", ",", ";", "\\"}
	var b strings.Builder
	for range r.IntN(maxPieces + 1) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func randomMessage(r *rand.Rand) Message {
	names := []string{"", "Ada Lovelace", "Ada \"The Countess\" Lovelace", "Zoë Ünïcødé", "日本 太郎", "O'Brien, Pat",
		strings.Repeat("Very Long Name ", 8), "a\\b", "Ünïcødé " + strings.Repeat("ß", 30)}
	m := Message{
		JobID: "campaign:1:" + fmt.Sprint(r.IntN(1000)), MessageID: fmt.Sprintf("%026x@example.com", r.Uint64()),
		From: "news@example.com", FromName: names[r.IntN(len(names))],
		To:      []string{"ada@example.org", "first.last+tag@sub.example.co.uk", "\"odd person\"@example.org"}[r.IntN(3)],
		ToName:  names[r.IntN(len(names))],
		Subject: strings.ReplaceAll(randomText(r, 12), "\x00", ""),
		Text:    randomText(r, 200),
		HTML:    randomText(r, 200),
	}
	if r.IntN(3) > 0 {
		m.ReplyTo = "help@example.com"
	}
	switch r.IntN(6) {
	case 0:
		m.Text = ""
	case 1:
		m.HTML = ""
	case 2:
		m.Text, m.HTML = "", ""
	}
	if r.IntN(4) > 0 {
		m.Headers = append(m.Headers,
			Header{"List-Unsubscribe", "<https://mail.example.com/u/AQJrMQECAwCM-9SXBa-OuJyBTcSN2gUoHdPryfTZkCCdhrDYyvQj>, <mailto:unsubscribe@example.com?subject=unsubscribe>"},
			Header{"List-Unsubscribe-Post", "List-Unsubscribe=One-Click"})
	}
	extra := []string{"X-Campaign", "x-campaign", "X-Tag", "In-Reply-To", "References", "X-A"}
	for range r.IntN(4) {
		m.Headers = append(m.Headers, Header{extra[r.IntN(len(extra))], randomText(r, 8)})
	}
	return m
}

// TestMIMEMatchesGoMail: the assembled message is byte for byte what go-mail
// wrote for the same message, date and boundary, over many random messages.
func TestMIMEMatchesGoMail(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 2026))
	date := time.Date(2026, 12, 1, 18, 4, 5, 0, time.FixedZone("", 3600))
	var buf []byte
	for i := range 3000 {
		m := randomMessage(r)
		var b [2 * boundaryBytes]byte
		boundary := newBoundary(&b)
		want := goMailMIME(t, m, date, string(boundary))
		var err error
		buf, err = appendMIME(buf[:0], m, date, boundary)
		require.NoError(t, err)
		require.Equal(t, string(want), string(buf), "message %d: %#v", i, m)
		requireCRLFOnly(t, buf)
	}
}

// requireCRLFOnly: every CR is followed by LF and every LF preceded by CR, which
// the dot-stuffing on the wire relies on.
func requireCRLFOnly(t *testing.T, b []byte) {
	t.Helper()
	for i, c := range b {
		switch c {
		case '\r':
			require.True(t, i+1 < len(b) && b[i+1] == '\n', "bare CR at %d", i)
		case '\n':
			require.True(t, i > 0 && b[i-1] == '\r', "bare LF at %d", i)
		}
	}
}

// TestMIMEParsesBack: what the assembled message says, read back with net/mail
// and mime/multipart, is the message: the headers decoded and the parts decoded
// from quoted-printable, with line breaks as CRLF.
func TestMIMEParsesBack(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(12, 2026))
	for i := range 1000 {
		m := randomMessage(r)
		// A literal encoded word in a subject that needs no encoding is read as
		// one (as it was with go-mail); and the stdlib quoted-printable writer
		// drops an LF that follows a lone CR after encoded bytes (the byte
		// comparison with go-mail covers both): leave them out here.
		m.Subject = strings.ReplaceAll(m.Subject, "=?", "=")
		m.Text = strings.ReplaceAll(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\r", "\n")
		m.HTML = strings.ReplaceAll(strings.ReplaceAll(m.HTML, "\r\n", "\n"), "\r", "\n")
		raw, err := AppendMIME(nil, m)
		require.NoError(t, err)
		got := parseMIME(t, raw)
		// Unfolding and header parsing do not keep leading, trailing or repeated blanks.
		require.Equal(t, strings.Fields(m.Subject), strings.Fields(got.Subject), "message %d", i)
		require.Equal(t, m.MessageID, got.MessageID)
		require.Equal(t, m.ToName, got.ToName)
		require.Equal(t, m.To, got.To)
		require.Equal(t, m.FromName, got.FromName)
		for _, h := range m.Headers {
			if h.Name == "List-Unsubscribe" || h.Name == "List-Unsubscribe-Post" {
				require.Equal(t, h.Value, got.Headers[h.Name])
			}
		}
		require.Equal(t, crlf(m.Text), got.Text, "message %d", i)
		require.Equal(t, crlf(m.HTML), got.HTML, "message %d", i)
	}
}

// crlf writes s's line breaks (CR, LF, CRLF) as quoted-printable text carries them.
func crlf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteString("\r\n")
			i++
		case s[i] == '\r' || s[i] == '\n':
			b.WriteString("\r\n")
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// parsedMIME is what a reader makes of a message.
type parsedMIME struct {
	Subject, MessageID, FromName, ToName, To string
	Headers                                  map[string]string
	Text, HTML                               string
}

func parseMIME(t testing.TB, raw []byte) parsedMIME {
	t.Helper()
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	var dec mime.WordDecoder
	var p parsedMIME
	p.Subject, err = dec.DecodeHeader(msg.Header.Get("Subject"))
	require.NoError(t, err)
	p.MessageID = strings.Trim(msg.Header.Get("Message-Id"), "<>")
	from, err := msg.Header.AddressList("From")
	require.NoError(t, err)
	p.FromName = from[0].Name
	to, err := msg.Header.AddressList("To")
	require.NoError(t, err)
	p.ToName, p.To = to[0].Name, to[0].Address
	p.Headers = map[string]string{}
	for k, v := range msg.Header {
		p.Headers[k] = strings.Join(strings.Fields(strings.Join(v, " ")), " ")
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	require.NoError(t, err)
	readPart := func(contentType string, body io.Reader) {
		b, err := io.ReadAll(quotedprintable.NewReader(body))
		require.NoError(t, err)
		switch contentType {
		case "text/plain; charset=UTF-8":
			p.Text = string(b)
		case "text/html; charset=UTF-8":
			p.HTML = string(b)
		default:
			t.Fatalf("unexpected part %q", contentType)
		}
	}
	if mediaType != "multipart/alternative" {
		require.Equal(t, "quoted-printable", msg.Header.Get("Content-Transfer-Encoding"))
		readPart(msg.Header.Get("Content-Type"), msg.Body)
		return p
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	var types []string
	for {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.Equal(t, "quoted-printable", part.Header.Get("Content-Transfer-Encoding"))
		types = append(types, part.Header.Get("Content-Type"))
		readPart(part.Header.Get("Content-Type"), part)
	}
	require.Equal(t, []string{"text/plain; charset=UTF-8", "text/html; charset=UTF-8"}, types, "text first")
	return p
}

// stdlibQP is mime/quotedprintable's encoding of s.
func stdlibQP(s string) string {
	var b bytes.Buffer
	w := quotedprintable.NewWriter(&b)
	w.Write([]byte(s)) //nolint:errcheck // a bytes.Buffer does not fail
	w.Close()          //nolint:errcheck // idem
	return b.String()
}

// FuzzAppendQP: appendQP writes what mime/quotedprintable writes.
func FuzzAppendQP(f *testing.F) {
	r := rand.New(rand.NewPCG(13, 2026))
	for range 200 {
		f.Add(randomText(r, 60))
	}
	f.Add(strings.Repeat("a", 75) + "=")
	f.Add(strings.Repeat("a", 74) + " \r\n" + strings.Repeat("b", 73) + "\t")
	f.Add("\r\né\n")
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, stdlibQP(s), string(appendQP(nil, s)))
		require.Equal(t, "prefix"+stdlibQP(s), string(appendQP([]byte("prefix"), s)), "appends")
	})
}

// FuzzMIMEMatchesGoMail: the assembled message is go-mail's for any subject,
// names and bodies.
func FuzzMIMEMatchesGoMail(f *testing.F) {
	f.Add("Hello Ada", "Example News", "Ada Lovelace", "text\n.dot\n", "<p>html</p>")
	f.Add("Héllo, a subject that is long enough to fold over the seventy-six characters", "Zoë", "", "", "<p>x</p>")
	f.Add("", "", "日本 太郎", "only text", "")
	date := time.Date(2026, 12, 1, 18, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, subject, fromName, toName, text, html string) {
		m := Message{JobID: "j", MessageID: "id@example.com", From: "news@example.com", FromName: fromName,
			To: "ada@example.org", ToName: toName, Subject: subject, Text: text, HTML: html,
			Headers: []Header{{"List-Unsubscribe-Post", "List-Unsubscribe=One-Click"}}}
		var b [2 * boundaryBytes]byte
		boundary := newBoundary(&b)
		got, err := appendMIME(nil, m, date, boundary)
		require.NoError(t, err)
		require.Equal(t, string(goMailMIME(t, m, date, string(boundary))), string(got))
	})
}

// TestMIMERefusesWhatItCannotWrite: no sender or recipient, a line break in an
// address, a header name that is none or a header the provider writes itself.
func TestMIMERefusesWhatItCannotWrite(t *testing.T) {
	t.Parallel()
	ok := Message{JobID: "j", MessageID: "id@example.com", From: "news@example.com", To: "ada@example.org", Text: "x"}
	_, err := AppendMIME(nil, ok)
	require.NoError(t, err)
	for name, m := range map[string]func(*Message){
		"no from":        func(m *Message) { m.From = "" },
		"no to":          func(m *Message) { m.To = "" },
		"break in to":    func(m *Message) { m.To = "ada@example.org\r\nBcc: eve@example.org" },
		"reply-to":       func(m *Message) { m.ReplyTo = "a@example.org\n" },
		"bad name":       func(m *Message) { m.Headers = []Header{{"X-A: b\r\nBcc", "eve@example.org"}} },
		"empty name":     func(m *Message) { m.Headers = []Header{{"", "x"}} },
		"content-type":   func(m *Message) { m.Headers = []Header{{"content-type", "text/plain"}} },
		"message-id":     func(m *Message) { m.Headers = []Header{{"Message-ID", "<x@y>"}} },
		"bcc (any case)": func(m *Message) { m.Headers = []Header{{"BCC", "eve@example.org"}} },
	} {
		bad := ok
		m(&bad)
		_, err := AppendMIME(nil, bad)
		require.Error(t, err, name)
	}
}

// TestMIMEWithoutMessageID: a message that comes without a Message-ID gets a
// random one, as with go-mail.
func TestMIMEWithoutMessageID(t *testing.T) {
	t.Parallel()
	m := Message{JobID: "j", From: "news@example.com", To: "ada@example.org", Text: "x"}
	a, err := AppendMIME(nil, m)
	require.NoError(t, err)
	b, err := AppendMIME(nil, m)
	require.NoError(t, err)
	ida, idb := parseMIME(t, a).MessageID, parseMIME(t, b).MessageID
	require.Contains(t, ida, "@")
	require.NotEqual(t, ida, idb)
}

// FuzzDotStuff: the message on the wire, dot-stuffed and ended, is what
// textproto's DotWriter writes for it, for CRLF-only content as assembled.
func FuzzDotStuff(f *testing.F) {
	r := rand.New(rand.NewPCG(15, 2026))
	for range 200 {
		f.Add(crlf(randomText(r, 40)))
	}
	for _, s := range []string{"", ".", "..", ".\r\n", "\r\n.", "a\r\n.\r\n.\r\n", ".a\r\n.b", "x\r\n..\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = crlf(s)
		var want bytes.Buffer
		dw := textproto.NewWriter(bufio.NewWriter(&want))
		w := dw.DotWriter()
		_, err := w.Write([]byte(s))
		require.NoError(t, err)
		require.NoError(t, w.Close())
		got := appendEndOfData(dotStuff(append(make([]byte, 0, len(s)), s...)))
		require.Equal(t, want.String(), string(got))
	})
}

// FuzzAppendAddress: appendAddress writes what net/mail's Address.String returns.
func FuzzAppendAddress(f *testing.F) {
	for _, s := range [][2]string{{"", "ada@example.org"}, {"Ada Lovelace", "ada@example.org"},
		{`Ada "The Countess"`, "first.last+tag@example.org"}, {"Zoë", "ada@example.org"}, {"a\\b", `"odd person"@example.org`},
		{"tab\there", ".dot@example.org"}, {"", "a..b@example.org"}, {"x", "dot.@example.org"}, {"", "no-at-sign"},
		{"", "ünï@example.org"}, {"(comment)", "a(b)@example.org"}, {"", "@example.org"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, addr string) {
		want := (&netmail.Address{Name: name, Address: addr}).String()
		require.Equal(t, want, string(appendAddress(nil, name, addr)))
		require.Equal(t, "x"+want, string(appendAddress([]byte("x"), name, addr)))
	})
}
