package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// SendGrid sends through SendGrid's v3 Mail Send API (POST /v3/mail/send). It has
// no idempotency key, so Idempotent is false and the campaign's ambiguous_policy
// decides. Our job id travels as the custom arg job_id, merged into SendGrid's
// events; the answer's X-Message-Id is the provider id.
//
// Classification:
//
//	429                                     → Temporary, X-RateLimit-Reset honoured
//	503                                     → Temporary
//	500 and other 5xx                       → Ambiguous
//	401, 403                                → Temporary, Config
//	400, 413 and other 4xx                  → Permanent
type SendGrid struct {
	c   *apiClient
	key string
	now func() time.Time
}

// SendGridEU is the API origin of SendGrid's EU region.
const SendGridEU = "https://api.eu.sendgrid.com"

// NewSendGrid returns a SendGrid adapter.
func NewSendGrid(s NativeSettings) (*SendGrid, error) {
	c, err := newAPIClient("https://api.sendgrid.com", s)
	if err != nil {
		return nil, err
	}
	return &SendGrid{c: c, key: s.Key, now: time.Now}, nil
}

type sgAddress struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
}

type sgContent struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

type sgPersonalization struct {
	To         []sgAddress       `json:"to"`
	Cc         []sgAddress       `json:"cc,omitempty"`
	Bcc        []sgAddress       `json:"bcc,omitempty"`
	CustomArgs map[string]string `json:"custom_args"`
}

type sgMail struct {
	Personalizations []sgPersonalization `json:"personalizations"`
	From             sgAddress           `json:"from"`
	ReplyTo          *sgAddress          `json:"reply_to,omitempty"`
	ReplyToList      []sgAddress         `json:"reply_to_list,omitempty"`
	Subject          string              `json:"subject"`
	Content          []sgContent         `json:"content"`
	Headers          map[string]string   `json:"headers,omitempty"`
	Attachments      []sgAttachment      `json:"attachments,omitempty"`
}

// sgAttachment is one of SendGrid's `attachments`: content in base64,
// disposition attachment or inline (with content_id, which the HTML names as cid:).
type sgAttachment struct {
	Content     []byte `json:"content"`
	Filename    string `json:"filename"`
	Type        string `json:"type,omitempty"`
	Disposition string `json:"disposition"`
	ContentID   string `json:"content_id,omitempty"`
}

// sgAddresses are addrs as SendGrid's address objects, leaving out any already
// in seen (SendGrid refuses an address twice in one personalization).
func sgAddresses(addrs []string, seen map[string]bool) []sgAddress {
	var out []sgAddress
	for _, a := range addrs {
		k := strings.ToLower(a)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, sgAddress{Email: a})
	}
	return out
}

func (p *SendGrid) header() http.Header {
	return http.Header{"Authorization": {"Bearer " + p.key}, "Content-Type": {"application/json"}}
}

// Send posts one email and returns the X-Message-Id SendGrid answers with.
func (p *SendGrid) Send(ctx context.Context, m Message) (string, error) {
	body := sgMail{
		Personalizations: []sgPersonalization{{To: []sgAddress{{Email: m.To, Name: m.ToName}},
			CustomArgs: map[string]string{"job_id": m.JobID}}},
		From: sgAddress{Email: m.From, Name: m.FromName}, Subject: m.Subject, Headers: headerMap(m),
	}
	seen := map[string]bool{strings.ToLower(m.To): true}
	body.Personalizations[0].Cc = sgAddresses(m.Cc, seen)
	body.Personalizations[0].Bcc = sgAddresses(m.Bcc, seen)
	switch rt := m.ReplyToAll(); {
	case len(rt) == 1:
		body.ReplyTo = &sgAddress{Email: rt[0]}
	case len(rt) > 1: // SendGrid takes reply_to or reply_to_list, not both
		body.ReplyToList = sgAddresses(rt, map[string]bool{})
	}
	for _, a := range m.Attachments {
		sa := sgAttachment{Content: a.Content, Filename: a.Filename, Type: a.ContentType, Disposition: "attachment"}
		if a.Inline() {
			sa.Disposition, sa.ContentID = "inline", a.ContentID
		}
		body.Attachments = append(body.Attachments, sa)
	}
	// SendGrid requires text/plain before text/html.
	if m.Text != "" {
		body.Content = append(body.Content, sgContent{"text/plain", m.Text})
	}
	if m.HTML != "" {
		body.Content = append(body.Content, sgContent{"text/html", m.HTML})
	}
	data, err := json.Marshal(body)
	if err != nil {
		return "", classed(Permanent, 0, err)
	}
	a, err := p.c.do(ctx, http.MethodPost, "/v3/mail/send", p.header(), data)
	if err != nil {
		return "", err
	}
	switch {
	case a.status >= 200 && a.status < 300:
		if id := a.header.Get("X-Message-Id"); id != "" {
			return id, nil
		}
		return m.JobID, nil
	case a.status == http.StatusTooManyRequests:
		wait := retryAfter(a.header, p.now())
		if wait == 0 {
			wait = resetAfter(a.header, p.now())
		}
		return "", rateLimited("sendgrid", a, wait, "")
	case a.status == http.StatusServiceUnavailable:
		return "", failure("sendgrid", Temporary, a, "")
	case a.status >= 500:
		return "", failure("sendgrid", Ambiguous, a, "")
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden:
		return "", configError("sendgrid", a, "")
	}
	return "", failure("sendgrid", Permanent, a, "")
}

// Verify lists the key's scopes (GET /v3/scopes, which sends nothing) and requires
// mail.send among them.
func (p *SendGrid) Verify(ctx context.Context) error {
	a, err := p.c.do(ctx, http.MethodGet, "/v3/scopes", p.header(), nil)
	if err := verifyAnswer("sendgrid", a, err); err != nil {
		return err
	}
	var s struct {
		Scopes []string `json:"scopes"`
	}
	if json.Unmarshal(a.body, &s) == nil && !slices.Contains(s.Scopes, "mail.send") {
		return verifyErr("auth", errString("the API key lacks the mail.send scope"))
	}
	return nil
}

// Idempotent is false: SendGrid has no idempotency key.
func (p *SendGrid) Idempotent() bool { return IdempotentKind("sendgrid") }

// Close drops idle connections.
func (p *SendGrid) Close() error { p.c.close(); return nil }

// errString is a constant error text.
type errString string

func (e errString) Error() string { return string(e) }
