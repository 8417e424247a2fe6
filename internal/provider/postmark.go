package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Postmark sends through Postmark's API (POST /email, X-Postmark-Server-Token). It
// has no idempotency key, so Idempotent is false and the campaign's
// ambiguous_policy decides what an interrupted send becomes. Our job id travels in
// Metadata.job_id, which Postmark echoes in its webhooks; Metadata values hold at
// most 80 characters, so a longer job id travels as fitKey derives it.
//
// Classification (HTTP status, then Postmark's ErrorCode):
//
//	429 or ErrorCode 429                                   → Temporary, Retry-After honoured
//	503, ErrorCode 100 (maintenance)                       → Temporary
//	500 and other 5xx (it may have accepted the message)   → Ambiguous
//	401, ErrorCode 10, 400, 401, 405, 412, 413             → Temporary, Config
//	ErrorCode 406 (inactive recipient)                     → Permanent, Suppress
//	other 4xx / ErrorCodes (300 invalid request, …)        → Permanent
type Postmark struct {
	c      *apiClient
	key    string
	stream string
	now    func() time.Time
}

// NewPostmark returns a Postmark adapter sending on stream (empty: "outbound").
func NewPostmark(s NativeSettings, stream string) (*Postmark, error) {
	c, err := newAPIClient("https://api.postmarkapp.com", s)
	if err != nil {
		return nil, err
	}
	if stream == "" {
		stream = "outbound"
	}
	return &Postmark{c: c, key: s.Key, stream: stream, now: time.Now}, nil
}

type postmarkHeader struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

type postmarkEmail struct {
	From          string               `json:"From"`
	To            string               `json:"To"`
	Subject       string               `json:"Subject"`
	HTMLBody      string               `json:"HtmlBody,omitempty"`
	TextBody      string               `json:"TextBody,omitempty"`
	ReplyTo       string               `json:"ReplyTo,omitempty"`
	Cc            string               `json:"Cc,omitempty"`
	Bcc           string               `json:"Bcc,omitempty"`
	Headers       []postmarkHeader     `json:"Headers,omitempty"`
	Metadata      map[string]string    `json:"Metadata"`
	MessageStream string               `json:"MessageStream"`
	Attachments   []postmarkAttachment `json:"Attachments,omitempty"`
}

// postmarkAttachment is one of Postmark's `Attachments`: Content in base64; an
// inline image has ContentID "cid:<id>", as Postmark's documentation writes it.
type postmarkAttachment struct {
	Name        string `json:"Name"`
	Content     []byte `json:"Content"`
	ContentType string `json:"ContentType"`
	ContentID   string `json:"ContentID,omitempty"`
}

func (p *Postmark) header() http.Header {
	return http.Header{"X-Postmark-Server-Token": {p.key}, "Content-Type": {"application/json"},
		"Accept": {"application/json"}}
}

// Send posts one email and returns Postmark's MessageID.
func (p *Postmark) Send(ctx context.Context, m Message) (string, error) {
	body := postmarkEmail{From: fromHeader(m.FromName, m.From), To: fromHeader(m.ToName, m.To), Subject: m.Subject,
		HTMLBody: m.HTML, TextBody: m.Text, ReplyTo: strings.Join(m.ReplyToAll(), ", "),
		Cc: strings.Join(m.Cc, ", "), Bcc: strings.Join(m.Bcc, ", "),
		Metadata: map[string]string{"job_id": fitKey(m.JobID, 80, nil)}, MessageStream: p.stream}
	if m.MessageID != "" {
		body.Headers = append(body.Headers, postmarkHeader{"Message-ID", "<" + m.MessageID + ">"})
	}
	for _, h := range m.Headers {
		body.Headers = append(body.Headers, postmarkHeader(h))
	}
	for _, a := range m.Attachments {
		pa := postmarkAttachment{Name: a.Filename, Content: a.Content, ContentType: a.ContentType}
		if a.Inline() {
			pa.ContentID = "cid:" + a.ContentID
		}
		body.Attachments = append(body.Attachments, pa)
	}
	data, err := json.Marshal(body)
	if err != nil {
		return "", classed(Permanent, 0, err)
	}
	a, err := p.c.do(ctx, http.MethodPost, "/email", p.header(), data)
	if err != nil {
		return "", err
	}
	var r struct {
		ErrorCode int    `json:"ErrorCode"`
		Message   string `json:"Message"`
		MessageID string `json:"MessageID"`
	}
	parsed := json.Unmarshal(a.body, &r) == nil
	if a.status == http.StatusOK && r.ErrorCode == 0 {
		if r.MessageID != "" {
			return r.MessageID, nil
		}
		return m.JobID, nil
	}
	detail := ""
	if parsed && r.Message != "" {
		detail = "ErrorCode " + strconv.Itoa(r.ErrorCode) + ": " + r.Message
	}
	switch {
	case a.status == http.StatusTooManyRequests || r.ErrorCode == 429:
		return "", rateLimited("postmark", a, retryAfter(a.header, p.now()), detail)
	case a.status == http.StatusServiceUnavailable || r.ErrorCode == 100:
		return "", failure("postmark", Temporary, a, detail)
	case a.status >= 500:
		return "", failure("postmark", Ambiguous, a, detail)
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden:
		return "", configError("postmark", a, detail)
	}
	switch r.ErrorCode {
	case 10, 400, 401, 405, 412, 413:
		return "", configError("postmark", a, detail)
	case 406:
		e := failure("postmark", Permanent, a, detail)
		e.Suppress = true
		return "", e
	}
	return "", failure("postmark", Permanent, a, detail)
}

// Verify reads the server the token belongs to (GET /server), which sends nothing.
func (p *Postmark) Verify(ctx context.Context) error {
	a, err := p.c.do(ctx, http.MethodGet, "/server", p.header(), nil)
	return verifyAnswer("postmark", a, err)
}

// Idempotent is false: Postmark has no idempotency key.
func (p *Postmark) Idempotent() bool { return IdempotentKind("postmark") }

// Close drops idle connections.
func (p *Postmark) Close() error { p.c.close(); return nil }
