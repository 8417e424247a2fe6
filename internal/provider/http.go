package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/sendonce/sendonce/internal/egress"
)

// HTTPSettings configure the HTTP provider.
type HTTPSettings struct {
	// URL receives one POST per message.
	URL string
	// Authorization is sent as the Authorization header when not empty
	// (e.g. "Bearer KEY").
	Authorization string
	// Timeout bounds one request, response included; 0 means 30s.
	Timeout time.Duration
	// Transport is for tests and tuning; nil means a transport of Guard's.
	Transport http.RoundTripper
	// Guard says where connections may go; nil (the operator's own provider,
	// tests): any address.
	Guard *egress.Guard
}

// HTTP posts each message as JSON to a URL with `Idempotency-Key: <job id>`, for a
// send service that keeps one result per key (the tenant's own, or an ESP such as
// Resend). A repeated key returns the first result, so it is idempotent.
//
// Classification of a failed request:
//
//	no response, request not fully written (dial refused, DNS, reset while writing) → Temporary
//	no response after the request was written (timeout, connection lost)             → Ambiguous
//	408, 409 (same key in progress), 425, 429, 503                                     → Temporary
//	3xx, 401, 403, 404, 405 (our configuration, not this message)                      → Temporary
//	500, 502, 504 and other 5xx (the server may have acted before failing)            → Ambiguous
//	other 4xx (the message itself is refused)                                          → Permanent
//
// net/http itself may resend a request that failed on a reused keep-alive
// connection, since it carries an Idempotency-Key; the server's dedup makes that safe.
//
// Configuration errors are Temporary rather than Permanent so that a wrong URL or a
// rotated key fails no recipient for good: the executor backs off and retries until
// its attempt limit, leaving time to fix the setting.
type HTTP struct {
	s      HTTPSettings
	client *http.Client
}

// NewHTTP returns an HTTP provider.
func NewHTTP(s HTTPSettings) (*HTTP, error) {
	if s.URL == "" || !(strings.HasPrefix(s.URL, "http://") || strings.HasPrefix(s.URL, "https://")) {
		return nil, fmt.Errorf("http provider: URL must be http:// or https://, got %q", s.URL)
	}
	if s.Timeout <= 0 {
		s.Timeout = 30 * time.Second
	}
	g := guardOf(s.Guard)
	tr := s.Transport
	if tr == nil {
		tr = transportOf(s.Guard)
	}
	// No redirect is followed: a redirected POST may be replayed as a GET without a body.
	return &HTTP{s: s, client: g.Client(tr, 0)}, nil
}

// HTTPPayload is the JSON body the HTTP provider posts (appendPayload writes it).
type HTTPPayload struct {
	JobID     string            `json:"job_id"`
	MessageID string            `json:"message_id"`
	From      string            `json:"from"`
	FromName  string            `json:"from_name"`
	ReplyTo   string            `json:"reply_to"`
	To        string            `json:"to"`
	ToName    string            `json:"to_name"`
	Subject   string            `json:"subject"`
	HTML      string            `json:"html"`
	Text      string            `json:"text"`
	Headers   map[string]string `json:"headers"`
	// ReplyToList is every Reply-To address (reply_to the first), present only
	// when there are several.
	ReplyToList []string         `json:"reply_to_list,omitempty"`
	Cc          []string         `json:"cc,omitempty"`
	Bcc         []string         `json:"bcc,omitempty"`
	Attachments []HTTPAttachment `json:"attachments,omitempty"`
}

// HTTPAttachment is one file of an HTTPPayload, its content in base64 (the
// field names are Resend's).
type HTTPAttachment struct {
	Filename    string `json:"filename"`
	Content     []byte `json:"content"`
	ContentType string `json:"content_type"`
	ContentID   string `json:"content_id,omitempty"`
}

// Send posts m and returns the id the server answered with (JSON `id` or
// `message_id`), or the job id when the body names none.
func (p *HTTP) Send(ctx context.Context, m Message) (string, error) {
	size := 256 + len(m.JobID) + len(m.MessageID) + len(m.From) + len(m.FromName) + len(m.ReplyTo) +
		len(m.To) + len(m.ToName) + len(m.Subject) + len(m.HTML)*9/8 + len(m.Text)*9/8
	for _, h := range m.Headers {
		size += len(h.Name) + len(h.Value) + 8
	}
	for _, a := range m.Attachments {
		size += 64 + len(a.Filename) + len(a.ContentType) + len(a.ContentID) + base64.StdEncoding.EncodedLen(len(a.Content))
	}
	for _, l := range [][]string{m.MoreReplyTo, m.Cc, m.Bcc} {
		for _, a := range l {
			size += len(a) + 4
		}
	}
	body := appendPayload(make([]byte, 0, size), &m)

	ctx, cancel := context.WithTimeout(ctx, p.s.Timeout)
	defer cancel()
	// wrote becomes true once a whole request reached the connection: from then on a
	// missing answer says nothing about whether the server acted on it.
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.s.URL, bytes.NewReader(body))
	if err != nil {
		return "", classed(Permanent, 0, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", m.JobID)
	if p.s.Authorization != "" {
		req.Header.Set("Authorization", p.s.Authorization)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		if egress.Refused(err) {
			return "", refusedError()
		}
		if wrote.Load() {
			return "", classed(Ambiguous, 0, err)
		}
		e := classed(Temporary, 0, err)
		e.RouteDown = true // nothing was written: the endpoint was not reached
		return "", e
	}
	defer resp.Body.Close()
	data, readErr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// The status alone says accepted; an unreadable body only loses the id.
		if readErr == nil {
			if id := responseID(data); id != "" {
				return id, nil
			}
		}
		return m.JobID, nil
	}
	e := classed(ClassifyHTTPStatus(resp.StatusCode), resp.StatusCode,
		fmt.Errorf("http provider answered %s: %s", resp.Status, snippet(data)))
	// 401 and 403 refuse our credentials, not this message: counted against the
	// sender (which pauses after several in a row), as the native adapters do.
	e.Config = resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
	return "", e
}

// ClassifyHTTPStatus maps a non-2xx status to a class (table on HTTP).
func ClassifyHTTPStatus(code int) Class {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusConflict, code == http.StatusTooEarly,
		code == http.StatusTooManyRequests, code == http.StatusServiceUnavailable:
		return Temporary
	case code >= 300 && code < 400, code == http.StatusUnauthorized, code == http.StatusForbidden,
		code == http.StatusNotFound, code == http.StatusMethodNotAllowed:
		return Temporary
	case code >= 500:
		return Ambiguous
	default:
		return Permanent
	}
}

// snippet is a short, sanitized excerpt of an error body for sends.last_error:
// at most 100 characters of printable text (control characters and runs of
// white space become one space, invalid UTF-8 is dropped), so an answer can be
// recognised without the body coming back verbatim.
func snippet(b []byte) string {
	var out strings.Builder
	n, space := 0, false
	for _, r := range strings.ToValidUTF8(string(b), "") {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			space = out.Len() > 0
			continue
		}
		if n == 100 {
			out.WriteString("…")
			break
		}
		if space {
			out.WriteByte(' ')
			n++
			space = false
		}
		out.WriteRune(r)
		n++
	}
	return out.String()
}

// Excerpt is snippet for text: what a verify answer may carry of a server's words
// (an SMTP reply, a provider's error message).
func Excerpt(s string) string { return snippet([]byte(s)) }

// Idempotent is true: the server keeps one result per Idempotency-Key.
func (p *HTTP) Idempotent() bool { return IdempotentKind("http") }

// Close drops idle connections.
func (p *HTTP) Close() error {
	p.client.CloseIdleConnections()
	return nil
}
