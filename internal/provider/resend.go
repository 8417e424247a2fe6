package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Resend sends through Resend's API (POST /emails) with our job id as the
// Idempotency-Key: Resend returns the first result for a repeated key within 24
// hours, so Idempotent is true and an ambiguous send is replayed. The job id also
// travels as the tag `job_id` (Resend tags accept [A-Za-z0-9_-], so `:` becomes `_`).
// Both hold at most 256 characters: a longer job id (a message under a long
// Idempotency-Key) travels as fitKey derives it, the same on every replay.
//
// Classification (Resend's error `name` and status):
//
//	429 rate_limit_exceeded, daily/monthly_quota_exceeded → Temporary, Retry-After honoured
//	409 concurrent_idempotent_requests, 5xx               → Temporary (the key makes a retry safe)
//	409 invalid_idempotent_request, 400, 422, 451         → Permanent
//	401, 403                                              → Temporary, Config
type Resend struct {
	c   *apiClient
	key string
	now func() time.Time
}

// NewResend returns a Resend adapter.
func NewResend(s NativeSettings) (*Resend, error) {
	c, err := newAPIClient("https://api.resend.com", s)
	if err != nil {
		return nil, err
	}
	return &Resend{c: c, key: s.Key, now: time.Now}, nil
}

// resendKeyMax is the longest Idempotency-Key and tag value Resend accepts.
const resendKeyMax = 256

type resendTag struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type resendEmail struct {
	From    string   `json:"from"`
	To      []string `json:"to"`
	Subject string   `json:"subject"`
	HTML    string   `json:"html,omitempty"`
	Text    string   `json:"text,omitempty"`
	// ReplyTo is a string for one address, as before lists existed, or an array.
	ReplyTo     any                `json:"reply_to,omitempty"`
	Cc          []string           `json:"cc,omitempty"`
	Bcc         []string           `json:"bcc,omitempty"`
	Headers     map[string]string  `json:"headers,omitempty"`
	Tags        []resendTag        `json:"tags"`
	Attachments []resendAttachment `json:"attachments,omitempty"`
}

// resendAttachment is one of Resend's `attachments`: content in base64 (a
// []byte marshals so), content_id for an inline image the HTML names as cid:.
type resendAttachment struct {
	Filename    string `json:"filename"`
	Content     []byte `json:"content"`
	ContentType string `json:"content_type,omitempty"`
	ContentID   string `json:"content_id,omitempty"`
}

// replyToField is a JSON reply-to field that takes a string or an array: the
// string for one address, the array for several, nothing for none.
func replyToField(m Message) any {
	switch rt := m.ReplyToAll(); len(rt) {
	case 0:
		return nil
	case 1:
		return rt[0]
	default:
		return rt
	}
}

func (p *Resend) header() http.Header {
	return http.Header{"Authorization": {"Bearer " + p.key}, "Content-Type": {"application/json"},
		"Accept": {"application/json"}}
}

// Send posts one email and returns Resend's id.
func (p *Resend) Send(ctx context.Context, m Message) (string, error) {
	body := resendEmail{From: fromHeader(m.FromName, m.From), To: []string{fromHeader(m.ToName, m.To)},
		Subject: m.Subject, HTML: m.HTML, Text: m.Text, ReplyTo: replyToField(m), Cc: m.Cc, Bcc: m.Bcc,
		Headers: headerMap(m), Tags: []resendTag{{Name: "job_id", Value: fitKey(m.JobID, resendKeyMax, tagSafe)}}}
	for _, a := range m.Attachments {
		body.Attachments = append(body.Attachments, resendAttachment{Filename: a.Filename, Content: a.Content,
			ContentType: a.ContentType, ContentID: a.ContentID})
	}
	data, err := json.Marshal(body)
	if err != nil {
		return "", classed(Permanent, 0, err)
	}
	h := p.header()
	h.Set("Idempotency-Key", fitKey(m.JobID, resendKeyMax, nil))
	a, err := p.c.do(ctx, http.MethodPost, "/emails", h, data)
	if err != nil {
		return "", err
	}
	if a.status == http.StatusOK || a.status == http.StatusCreated {
		var ok struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(a.body, &ok) == nil && ok.ID != "" {
			return ok.ID, nil
		}
		return m.JobID, nil
	}
	var e struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(a.body, &e)
	detail := e.Name + ": " + e.Message
	if e.Name == "" {
		detail = ""
	}
	switch {
	case a.status == http.StatusTooManyRequests:
		return "", rateLimited("resend", a, retryAfter(a.header, p.now()), detail)
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden:
		return "", configError("resend", a, detail)
	case a.status == http.StatusConflict && e.Name == "concurrent_idempotent_requests":
		return "", failure("resend", Temporary, a, detail)
	case a.status >= 500:
		return "", failure("resend", Temporary, a, detail)
	}
	return "", failure("resend", Permanent, a, detail)
}

// Verify lists the account's domains, a call that sends nothing. A key restricted
// to sending answers 401 restricted_api_key, which proves the key is valid.
func (p *Resend) Verify(ctx context.Context) error {
	a, err := p.c.do(ctx, http.MethodGet, "/domains", p.header(), nil)
	if err == nil && a.status == http.StatusUnauthorized {
		var e struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(a.body, &e) == nil && e.Name == "restricted_api_key" {
			return nil
		}
	}
	return verifyAnswer("resend", a, err)
}

// Idempotent is true: Resend deduplicates on Idempotency-Key.
func (p *Resend) Idempotent() bool { return IdempotentKind("resend") }

// Close drops idle connections.
func (p *Resend) Close() error { p.c.close(); return nil }

// headerMap returns the message's extra headers, Message-ID included, as an object.
func headerMap(m Message) map[string]string {
	h := make(map[string]string, len(m.Headers)+1)
	if m.MessageID != "" {
		h["Message-ID"] = "<" + m.MessageID + ">"
	}
	for _, x := range m.Headers {
		h[x.Name] = x.Value
	}
	return h
}
