package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"
)

// Mailgun sends through Mailgun's API (POST /v3/{domain}/messages, multipart form,
// basic auth api:<key>). It has no idempotency key, so Idempotent is false and the
// campaign's ambiguous_policy decides. Our job id travels as the user variable
// v:job_id — which Mailgun shows to recipients in X-Mailgun-Variables, so it holds
// nothing but the job id.
//
// Classification:
//
//	429                                       → Temporary, Retry-After / X-RateLimit-Reset honoured
//	503                                       → Temporary
//	500 and other 5xx                         → Ambiguous
//	401, 403, 404 (a wrong or removed domain) → Temporary, Config
//	400 and other 4xx                       → Permanent
type Mailgun struct {
	c      *apiClient
	auth   string
	domain string
	now    func() time.Time
}

// MailgunEU is the API origin of Mailgun's EU region.
const MailgunEU = "https://api.eu.mailgun.net"

// NewMailgun returns a Mailgun adapter sending for domain.
func NewMailgun(s NativeSettings, domain string) (*Mailgun, error) {
	c, err := newAPIClient("https://api.mailgun.net", s)
	if err != nil {
		return nil, err
	}
	return &Mailgun{c: c, domain: domain, now: time.Now,
		auth: "Basic " + base64.StdEncoding.EncodeToString([]byte("api:"+s.Key))}, nil
}

// Send posts one message and returns Mailgun's id.
func (p *Mailgun) Send(ctx context.Context, m Message) (string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	field := func(k, v string) {
		if v != "" {
			_ = w.WriteField(k, v)
		}
	}
	field("from", fromHeader(m.FromName, m.From))
	field("to", fromHeader(m.ToName, m.To))
	field("subject", m.Subject)
	field("text", m.Text)
	field("html", m.HTML)
	field("cc", strings.Join(m.Cc, ", "))
	field("bcc", strings.Join(m.Bcc, ", "))
	field("h:Reply-To", strings.Join(m.ReplyToAll(), ", "))
	if m.MessageID != "" {
		field("h:Message-Id", "<"+m.MessageID+">")
	}
	for _, h := range m.Headers {
		field("h:"+h.Name, h.Value)
	}
	field("v:job_id", m.JobID)
	// Files go as form files named attachment, or inline for an inline image:
	// Mailgun makes an inline file's Content-ID its file name, so an inline
	// file is named by its content id (what the HTML's cid: refers to).
	for _, a := range m.Attachments {
		name, filename := "attachment", a.Filename
		if a.Inline() {
			name, filename = "inline", a.ContentID
		}
		hdr := textproto.MIMEHeader{}
		hdr.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": name, "filename": filename}))
		hdr.Set("Content-Type", attachmentContentType(a))
		fw, err := w.CreatePart(hdr)
		if err == nil {
			_, err = fw.Write(a.Content)
		}
		if err != nil {
			return "", classed(Permanent, 0, err)
		}
	}
	if err := w.Close(); err != nil {
		return "", classed(Permanent, 0, err)
	}
	h := http.Header{"Authorization": {p.auth}, "Content-Type": {w.FormDataContentType()}}
	a, err := p.c.do(ctx, http.MethodPost, "/v3/"+url.PathEscape(p.domain)+"/messages", h, buf.Bytes())
	if err != nil {
		return "", err
	}
	var r struct {
		ID      string `json:"id"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(a.body, &r)
	switch {
	case a.status >= 200 && a.status < 300:
		if r.ID != "" {
			return r.ID, nil
		}
		return m.JobID, nil
	case a.status == http.StatusTooManyRequests:
		wait := retryAfter(a.header, p.now())
		if wait == 0 {
			wait = resetAfter(a.header, p.now())
		}
		return "", rateLimited("mailgun", a, wait, r.Message)
	case a.status == http.StatusServiceUnavailable:
		return "", failure("mailgun", Temporary, a, r.Message)
	case a.status >= 500:
		return "", failure("mailgun", Ambiguous, a, r.Message)
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden || a.status == http.StatusNotFound:
		// 404 is the domain in the URL (a typo, a domain removed from the account):
		// every message would meet it, so it counts toward pausing the sender.
		return "", configError("mailgun", a, r.Message)
	}
	return "", failure("mailgun", Permanent, a, r.Message)
}

// Verify reads the sending domain (GET /v4/domains/{domain}, which replaced the
// v3 call), which sends nothing. A domain sending key may only call /messages and
// is refused here.
func (p *Mailgun) Verify(ctx context.Context) error {
	a, err := p.c.do(ctx, http.MethodGet, "/v4/domains/"+url.PathEscape(p.domain),
		http.Header{"Authorization": {p.auth}}, nil)
	return verifyAnswer("mailgun", a, err)
}

// Idempotent is false: Mailgun has no idempotency key.
func (p *Mailgun) Idempotent() bool { return IdempotentKind("mailgun") }

// Close drops idle connections.
func (p *Mailgun) Close() error { p.c.close(); return nil }
