package provider_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/mail"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
)

// attachMsg is a message with a regular attachment (binary, every byte value),
// a second one with a name that is not ASCII and contains spaces, and an inline
// image the HTML refers to; with two Reply-To, a Cc and a Bcc.
func attachMsg(t *testing.T) provider.Message {
	t.Helper()
	m := testMessage("message:3:inv-1")
	m.HTML = `<p>Invoice <img src="cid:logo@x"></p>`
	m.MoreReplyTo = []string{"billing@example.com"}
	m.Cc = []string{"cc@example.org"}
	m.Bcc = []string{"audit@example.net"}
	pdf := make([]byte, 70_000)
	_, _ = rand.Read(pdf)
	all := make([]byte, 256*3)
	for i := range all {
		all[i] = byte(i)
	}
	m.Attachments = []provider.Attachment{
		{Filename: "invoice.pdf", ContentType: "application/pdf", Content: pdf},
		{Filename: "Überweisung März 2026.bin", ContentType: "application/octet-stream", Content: all},
		{Filename: "logo.png", ContentType: "image/png", ContentID: "logo@x", Content: []byte("\x89PNG\r\n\x1a\nlogo")},
	}
	return m
}

// part is one leaf of a parsed MIME tree.
type part struct {
	path        string // content types from the root, joined by " > "
	disposition string
	filename    string
	contentID   string
	contentType string
	body        []byte
}

// walk parses a MIME entity into its leaves, decoding base64 bodies.
func walk(t *testing.T, header func(string) string, body io.Reader, path string) []part {
	t.Helper()
	mt, params, err := mime.ParseMediaType(header("Content-Type"))
	require.NoError(t, err)
	path += " > " + mt
	if strings.HasPrefix(mt, "multipart/") {
		var out []part
		r := multipart.NewReader(body, params["boundary"])
		for {
			p, err := r.NextRawPart()
			if err == io.EOF {
				return out
			}
			require.NoError(t, err)
			out = append(out, walk(t, p.Header.Get, p, path)...)
		}
	}
	data, err := io.ReadAll(body)
	require.NoError(t, err)
	if header("Content-Transfer-Encoding") == "base64" {
		data, err = io.ReadAll(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(data)))
		require.NoError(t, err)
	}
	p := part{path: path, contentType: mt, body: data, contentID: header("Content-ID")}
	if d := header("Content-Disposition"); d != "" {
		disp, dp, err := mime.ParseMediaType(d)
		require.NoError(t, err)
		p.disposition, p.filename = disp, dp["filename"]
		require.Equal(t, dp["filename"], params["name"], "Content-Type name and Content-Disposition filename agree")
	}
	return []part{p}
}

// TestMIMEAttachmentsParseBack: the MIME the SMTP provider writes, parsed back
// with net/mail and mime/multipart, has the structure mail clients expect
// (mixed > related > alternative, inline parts in related), each attachment's
// bytes exactly, names decoded (RFC 2231), Cc and both Reply-To in headers and
// no Bcc header.
func TestMIMEAttachmentsParseBack(t *testing.T) {
	t.Parallel()
	m := attachMsg(t)
	raw, err := provider.AppendMIME(nil, m)
	require.NoError(t, err)
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	require.Empty(t, msg.Header.Get("Bcc"))
	require.NotContains(t, string(raw), "audit@example.net")
	cc, err := msg.Header.AddressList("Cc")
	require.NoError(t, err)
	require.Equal(t, "cc@example.org", cc[0].Address)
	rt, err := msg.Header.AddressList("Reply-To")
	require.NoError(t, err)
	require.Len(t, rt, 2)
	require.Equal(t, "help@example.com", rt[0].Address)
	require.Equal(t, "billing@example.com", rt[1].Address)

	parts := walk(t, msg.Header.Get, msg.Body, "")
	require.Len(t, parts, 5)
	require.Equal(t, " > multipart/mixed > multipart/related > multipart/alternative > text/plain", parts[0].path)
	require.Equal(t, " > multipart/mixed > multipart/related > multipart/alternative > text/html", parts[1].path)
	require.Equal(t, " > multipart/mixed > multipart/related > image/png", parts[2].path)
	require.Equal(t, "inline", parts[2].disposition)
	require.Equal(t, "<logo@x>", parts[2].contentID)
	require.Equal(t, m.Attachments[2].Content, parts[2].body)
	for i, want := range m.Attachments[:2] {
		got := parts[3+i]
		require.Equal(t, " > multipart/mixed > "+want.ContentType, got.path)
		require.Equal(t, "attachment", got.disposition)
		require.Equal(t, want.Filename, got.filename)
		require.True(t, bytes.Equal(want.Content, got.body), "attachment %d differs", i)
	}

	// Only regular attachments: mixed > alternative; only inline: related alone.
	only := m
	only.Attachments = m.Attachments[:1]
	raw, err = provider.AppendMIME(nil, only)
	require.NoError(t, err)
	msg, err = mail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	parts = walk(t, msg.Header.Get, msg.Body, "")
	require.Equal(t, " > multipart/mixed > application/pdf", parts[2].path)
	only.Attachments = m.Attachments[2:]
	raw, err = provider.AppendMIME(nil, only)
	require.NoError(t, err)
	msg, err = mail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	parts = walk(t, msg.Header.Get, msg.Body, "")
	require.Equal(t, " > multipart/related > image/png", parts[2].path)
	// An inline attachment of a text-only message is an attachment (no HTML refers to it).
	only.HTML = ""
	raw, err = provider.AppendMIME(nil, only)
	require.NoError(t, err)
	msg, err = mail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	parts = walk(t, msg.Header.Get, msg.Body, "")
	require.Equal(t, " > multipart/mixed > image/png", parts[1].path)
	require.Equal(t, "attachment", parts[1].disposition)
}

// TestSMTPCarriesAttachmentsAndCopies: through a real SMTP session the envelope
// holds To, Cc and Bcc (each once), the data holds no Bcc, and the attachments
// arrive byte for byte.
func TestSMTPCarriesAttachmentsAndCopies(t *testing.T) {
	t.Parallel()
	p, s := setupSMTP(t, 1, sink.SMTPOptions{})
	m := attachMsg(t)
	m.Bcc = append(m.Bcc, "CC@example.org") // already a Cc: one RCPT
	_, err := p.Send(context.Background(), m)
	require.NoError(t, err)
	got := s.Messages()[0]
	require.Equal(t, []string{"ada@example.org", "cc@example.org", "audit@example.net"}, got.To)
	require.NotContains(t, string(got.Raw), "audit@example.net")
	msg, err := mail.ReadMessage(bytes.NewReader(got.Raw))
	require.NoError(t, err)
	parts := walk(t, msg.Header.Get, msg.Body, "")
	require.Len(t, parts, 5)
	require.True(t, bytes.Equal(m.Attachments[0].Content, parts[3].body))
	require.True(t, bytes.Equal(m.Attachments[1].Content, parts[4].body))
	require.True(t, bytes.Equal(m.Attachments[2].Content, parts[2].body))
}

// TestSMTPRefusedCopyRefusesTheMessage: a relay refusing the Bcc recipient
// refuses the message (all or nothing), and the connection carries the next one.
func TestSMTPRefusedCopyRefusesTheMessage(t *testing.T) {
	t.Parallel()
	p, s := setupSMTP(t, 1, sink.SMTPOptions{Fault: func(rcpt string) sink.Fault {
		if rcpt == "audit@example.net" {
			return sink.RcptPerm
		}
		return sink.Deliver
	}})
	_, err := p.Send(context.Background(), attachMsg(t))
	require.Equal(t, provider.Permanent, provider.ClassOf(err), "%v", err)
	require.Empty(t, s.Messages())
	_, err = p.Send(context.Background(), testMessage("campaign:1:9"))
	require.NoError(t, err)
	require.Len(t, s.Messages(), 1)
}

// decodeJSON decodes a request body the fakes receive.
func decodeJSON(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var got map[string]any
	require.NoError(t, json.Unmarshal(body, &got))
	return got
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestNativeAdaptersCarryAttachments: each adapter's request has the shape its
// provider documents for attachments, copies and Reply-To lists (REFERENCE §9.1:
// Resend and SendGrid `attachments`, Postmark `Attachments` with "cid:" content
// ids, Mailgun form files attachment/inline, SES raw MIME).
func TestNativeAdaptersCarryAttachments(t *testing.T) {
	t.Parallel()
	m := attachMsg(t)
	ctx := context.Background()

	t.Run("resend", func(t *testing.T) {
		t.Parallel()
		url := fake(t, answer{200, nil, `{"id":"re-1"}`}, func(r *http.Request, body []byte) {
			got := decodeJSON(t, body)
			require.Equal(t, []any{"help@example.com", "billing@example.com"}, got["reply_to"])
			require.Equal(t, []any{"cc@example.org"}, got["cc"])
			require.Equal(t, []any{"audit@example.net"}, got["bcc"])
			require.Equal(t, []any{
				map[string]any{"filename": "invoice.pdf", "content": b64(m.Attachments[0].Content), "content_type": "application/pdf"},
				map[string]any{"filename": "Überweisung März 2026.bin", "content": b64(m.Attachments[1].Content), "content_type": "application/octet-stream"},
				map[string]any{"filename": "logo.png", "content": b64(m.Attachments[2].Content), "content_type": "image/png", "content_id": "logo@x"},
			}, got["attachments"])
		})
		p, err := provider.NewResend(provider.NativeSettings{Key: "re_key", BaseURL: url})
		require.NoError(t, err)
		_, err = p.Send(ctx, m)
		require.NoError(t, err)
	})
	t.Run("postmark", func(t *testing.T) {
		t.Parallel()
		url := fake(t, answer{200, nil, `{"ErrorCode":0,"MessageID":"pm-1"}`}, func(r *http.Request, body []byte) {
			got := decodeJSON(t, body)
			require.Equal(t, "help@example.com, billing@example.com", got["ReplyTo"])
			require.Equal(t, "cc@example.org", got["Cc"])
			require.Equal(t, "audit@example.net", got["Bcc"])
			require.Equal(t, []any{
				map[string]any{"Name": "invoice.pdf", "Content": b64(m.Attachments[0].Content), "ContentType": "application/pdf"},
				map[string]any{"Name": "Überweisung März 2026.bin", "Content": b64(m.Attachments[1].Content), "ContentType": "application/octet-stream"},
				map[string]any{"Name": "logo.png", "Content": b64(m.Attachments[2].Content), "ContentType": "image/png", "ContentID": "cid:logo@x"},
			}, got["Attachments"])
		})
		p, err := provider.NewPostmark(provider.NativeSettings{Key: "pm", BaseURL: url}, "")
		require.NoError(t, err)
		_, err = p.Send(ctx, m)
		require.NoError(t, err)
	})
	t.Run("sendgrid", func(t *testing.T) {
		t.Parallel()
		url := fake(t, answer{202, map[string]string{"X-Message-Id": "sg-1"}, ""}, func(r *http.Request, body []byte) {
			got := decodeJSON(t, body)
			pers := got["personalizations"].([]any)[0].(map[string]any)
			require.Equal(t, []any{map[string]any{"email": "cc@example.org"}}, pers["cc"])
			require.Equal(t, []any{map[string]any{"email": "audit@example.net"}}, pers["bcc"])
			require.Nil(t, got["reply_to"])
			require.Equal(t, []any{map[string]any{"email": "help@example.com"}, map[string]any{"email": "billing@example.com"}},
				got["reply_to_list"])
			require.Equal(t, []any{
				map[string]any{"content": b64(m.Attachments[0].Content), "filename": "invoice.pdf", "type": "application/pdf", "disposition": "attachment"},
				map[string]any{"content": b64(m.Attachments[1].Content), "filename": "Überweisung März 2026.bin", "type": "application/octet-stream", "disposition": "attachment"},
				map[string]any{"content": b64(m.Attachments[2].Content), "filename": "logo.png", "type": "image/png", "disposition": "inline", "content_id": "logo@x"},
			}, got["attachments"])
		})
		p, err := provider.NewSendGrid(provider.NativeSettings{Key: "sg", BaseURL: url})
		require.NoError(t, err)
		_, err = p.Send(ctx, m)
		require.NoError(t, err)
	})
	t.Run("mailgun", func(t *testing.T) {
		t.Parallel()
		url := fake(t, answer{200, nil, `{"id":"<mg-1@x>"}`}, func(r *http.Request, body []byte) {
			r.Body = io.NopCloser(bytes.NewReader(body))
			require.NoError(t, r.ParseMultipartForm(1<<20))
			f := r.MultipartForm
			require.Equal(t, []string{"cc@example.org"}, f.Value["cc"])
			require.Equal(t, []string{"audit@example.net"}, f.Value["bcc"])
			require.Equal(t, []string{"help@example.com, billing@example.com"}, f.Value["h:Reply-To"])
			files := f.File["attachment"]
			require.Len(t, files, 2)
			for i, fh := range files {
				require.Equal(t, m.Attachments[i].Filename, fh.Filename)
				require.Equal(t, m.Attachments[i].ContentType, fh.Header.Get("Content-Type"))
				rd, err := fh.Open()
				require.NoError(t, err)
				data, _ := io.ReadAll(rd)
				require.True(t, bytes.Equal(m.Attachments[i].Content, data))
			}
			inline := f.File["inline"]
			require.Len(t, inline, 1)
			require.Equal(t, "logo@x", inline[0].Filename, "Mailgun's cid is the file name")
		})
		p, err := provider.NewMailgun(provider.NativeSettings{Key: "mg", BaseURL: url}, "mg.example.com")
		require.NoError(t, err)
		_, err = p.Send(ctx, m)
		require.NoError(t, err)
	})
	t.Run("ses", func(t *testing.T) {
		t.Parallel()
		url, _ := sesFake(t, 200, "", func(r *http.Request, b map[string]any) {
			require.Equal(t, map[string]any{"ToAddresses": []any{`"Ada Lovelace" <ada@example.org>`},
				"CcAddresses": []any{"cc@example.org"}, "BccAddresses": []any{"audit@example.net"}}, b["Destination"])
			require.Nil(t, b["ReplyToAddresses"], "in the raw message's headers")
			content := b["Content"].(map[string]any)
			require.Nil(t, content["Simple"])
			raw, err := base64.StdEncoding.DecodeString(content["Raw"].(map[string]any)["Data"].(string))
			require.NoError(t, err)
			msg, err := mail.ReadMessage(bytes.NewReader(raw))
			require.NoError(t, err)
			require.Empty(t, msg.Header.Get("Bcc"))
			parts := walk(t, msg.Header.Get, msg.Body, "")
			require.Len(t, parts, 5)
			require.True(t, bytes.Equal(m.Attachments[0].Content, parts[3].body))
			require.True(t, bytes.Equal(m.Attachments[2].Content, parts[2].body))
		})
		_, err := newSES(t, url).Send(ctx, m)
		require.NoError(t, err)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		url := fake(t, answer{200, nil, `{"id":"h-1"}`}, func(r *http.Request, body []byte) {
			var got provider.HTTPPayload
			require.NoError(t, json.Unmarshal(body, &got))
			require.Equal(t, "help@example.com", got.ReplyTo)
			require.Equal(t, []string{"help@example.com", "billing@example.com"}, got.ReplyToList)
			require.Equal(t, []string{"cc@example.org"}, got.Cc)
			require.Equal(t, []string{"audit@example.net"}, got.Bcc)
			require.Len(t, got.Attachments, 3)
			for i, a := range got.Attachments {
				require.Equal(t, provider.HTTPAttachment{Filename: m.Attachments[i].Filename, Content: m.Attachments[i].Content,
					ContentType: m.Attachments[i].ContentType, ContentID: m.Attachments[i].ContentID}, a)
			}
		})
		p, err := provider.NewHTTP(provider.HTTPSettings{URL: url})
		require.NoError(t, err)
		_, err = p.Send(ctx, m)
		require.NoError(t, err)
	})
}
