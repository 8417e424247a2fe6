package transactional_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/transactional"
)

// smtpSink is the SMTP provider in front of an SMTP sink that keeps messages.
func smtpSink(t *testing.T) (*recorder, *sink.SMTP) {
	t.Helper()
	s := sink.NewSMTP(sink.SMTPOptions{KeepMessages: true})
	addr, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	n, err := strconv.Atoi(port)
	require.NoError(t, err)
	p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: n, Security: "none", Conns: 2, Timeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return &recorder{next: p, calls: map[string]int{}}, s
}

// leaves returns the decoded bodies of a parsed message's non-text parts, by
// file name, and the content id of each.
func leaves(t *testing.T, raw []byte) (map[string][]byte, map[string]string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	files, cids := map[string][]byte{}, map[string]string{}
	var walk func(ct string, body io.Reader)
	walk = func(ct string, body io.Reader) {
		_, params, err := mime.ParseMediaType(ct)
		require.NoError(t, err)
		r := multipart.NewReader(body, params["boundary"])
		for {
			p, err := r.NextRawPart()
			if err == io.EOF {
				return
			}
			require.NoError(t, err)
			pt := p.Header.Get("Content-Type")
			if sub, _, _ := mime.ParseMediaType(pt); len(sub) > 10 && sub[:10] == "multipart/" {
				walk(pt, p)
				continue
			}
			_, dp, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
			if dp["filename"] == "" {
				continue
			}
			data, err := io.ReadAll(base64.NewDecoder(base64.StdEncoding, p))
			require.NoError(t, err)
			files[dp["filename"]] = data
			cids[dp["filename"]] = p.Header.Get("Content-ID")
		}
	}
	walk(msg.Header.Get("Content-Type"), msg.Body)
	return files, cids
}

// A message's files are stored once per account (by SHA-256), sent through the
// executor and the SMTP provider byte for byte, with cc and bcc in the envelope;
// two messages carrying one file store it once.
func TestMessageAttachmentsArriveIntact(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.builder.Attachments = transactional.LoadAttachments(e.pool)
	rec, s := smtpSink(t)
	e.start(t, rec, executor.Config{Workers: 2, BatchSize: 4, Tick: time.Second, Poll: 50 * time.Millisecond},
		func() map[string]int { c, _ := rec.snapshot(); return c })
	pdf := make([]byte, 300_000)
	_, _ = rand.Read(pdf)
	logo := []byte("\x89PNG\r\n\x1a\n\x00\x00logo")
	subject, html := "Invoice", `<p>Invoice <img src="cid:logo@shop"></p>`
	req := transactional.Request{To: "ada@example.com", From: "shop@example.com", Subject: &subject, HTML: &html,
		ReplyTo: "help@example.com", MoreReplyTo: []string{"billing@example.com"},
		Cc: []string{"Accounts@Example.org"}, Bcc: []string{"audit@example.net"},
		Attachments: []transactional.Attachment{
			{Filename: "invoice.pdf", Content: base64.StdEncoding.EncodeToString(pdf)},
			{Filename: "logo.png", Content: base64.StdEncoding.EncodeToString(logo), ContentType: "image/png", ContentID: "logo@shop"},
		}}
	ctx := context.Background()
	m, created, err := e.svc.Send(ctx, e.account, "inv-1", req)
	require.NoError(t, err)
	require.True(t, created)
	require.Len(t, m.Attachments, 2)
	require.Equal(t, transactional.AttachmentInfo{Filename: "invoice.pdf", ContentType: "application/pdf", Size: len(pdf),
		SHA256: m.Attachments[0].SHA256}, m.Attachments[0], "content type guessed from the extension")
	require.Equal(t, []string{"Accounts@example.org"}, m.Cc, "the domain lowercased, the local part kept, as every address")
	require.Equal(t, []string{"audit@example.net"}, m.Bcc)
	require.Equal(t, []string{"billing@example.com"}, m.MoreReplyTo)

	// The same request again is the same message; another message with the same
	// pdf stores no second copy.
	again, created, err := e.svc.Send(ctx, e.account, "inv-1", req)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, m.ID, again.ID)
	req2 := req
	req2.Attachments = req.Attachments[:1]
	req2.Cc, req2.Bcc = nil, nil
	m2, _, err := e.svc.Send(ctx, e.account, "inv-2", req2)
	require.NoError(t, err)
	var blobs int
	require.NoError(t, e.pool.QueryRow(ctx, "SELECT count(*) FROM attachment_blobs").Scan(&blobs))
	require.Equal(t, 2, blobs)

	for _, id := range []int64{m.ID, m2.ID} {
		got := e.waitStatus(t, id)
		require.Equal(t, "sent", got.Status, "%+v", got)
	}
	byTo := map[int]sink.SMTPMessage{}
	for _, sm := range s.Messages() {
		byTo[len(sm.To)] = sm
	}
	first := byTo[3]
	require.Equal(t, []string{"ada@example.com", "Accounts@example.org", "audit@example.net"}, first.To)
	require.NotContains(t, string(first.Raw), "audit@example.net")
	rt, err := first.Header.AddressList("Reply-To")
	require.NoError(t, err)
	require.Len(t, rt, 2)
	files, cids := leaves(t, first.Raw)
	require.True(t, bytes.Equal(pdf, files["invoice.pdf"]))
	require.True(t, bytes.Equal(logo, files["logo.png"]))
	require.Equal(t, "<logo@shop>", cids["logo.png"])
	files, _ = leaves(t, byTo[1].Raw)
	require.True(t, bytes.Equal(pdf, files["invoice.pdf"]))
}
