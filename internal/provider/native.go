package provider

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/mail"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/sendonce/sendonce/internal/backoff"
	"github.com/sendonce/sendonce/internal/egress"
)

// NativeSettings configure a native provider adapter (Resend, Postmark, SendGrid,
// Mailgun).
type NativeSettings struct {
	// Key is the API key or server token.
	Key string
	// BaseURL replaces the provider's API origin (a region, a proxy, a test server);
	// empty means the provider's documented one.
	BaseURL string
	// Timeout bounds one request, answer included; 0 means 30s.
	Timeout time.Duration
	// Transport is for tests and tuning; nil means a transport of Guard's.
	Transport http.RoundTripper
	// Guard says where connections may go. A sender (aimed by a tenant) always sets
	// it; nil is for the operator's own configuration and tests: any address, and
	// the proxy the environment configures.
	Guard *egress.Guard
}

// guardOf is the guard of a provider's settings: nil lets any address through
// (still no redirects).
func guardOf(g *egress.Guard) egress.Guard {
	if g == nil {
		return egress.Guard{AllowPrivate: true}
	}
	return *g
}

// transportOf is the HTTP transport of a provider: the guard's (no proxy, the
// address checked when dialled), or for the operator's own provider (nil guard)
// the standard one, which honours the proxy the environment configures.
func transportOf(g *egress.Guard) *http.Transport {
	var t *http.Transport
	if g == nil {
		t = http.DefaultTransport.(*http.Transport).Clone()
	} else {
		t = g.Transport()
	}
	t.MaxIdleConnsPerHost = 64
	return t
}

// apiClient is the HTTP plumbing shared by the native adapters: one request, the
// answer read whole (bounded), and whether the request reached the wire, which
// decides between Temporary and Ambiguous when no answer comes.
type apiClient struct {
	base    string
	timeout time.Duration
	client  *http.Client
}

func newAPIClient(base string, s NativeSettings) (*apiClient, error) {
	if s.BaseURL != "" {
		base = strings.TrimRight(s.BaseURL, "/")
	}
	if !strings.HasPrefix(base, "https://") && !strings.HasPrefix(base, "http://") {
		return nil, fmt.Errorf("base URL must be http:// or https://, got %q", base)
	}
	if s.Timeout <= 0 {
		s.Timeout = 30 * time.Second
	}
	g := guardOf(s.Guard)
	tr := s.Transport
	if tr == nil {
		tr = transportOf(s.Guard)
	}
	// No redirect is followed: a redirected POST may be replayed as a GET without a
	// body, and the 3xx is the provider's answer.
	return &apiClient{base: base, timeout: s.Timeout, client: g.Client(tr, 0)}, nil
}

// apiAnswer is a provider's answer to one request.
type apiAnswer struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request. A transport failure is returned classified: Temporary
// when the request never fully reached the connection, Ambiguous after.
func (c *apiClient) do(ctx context.Context, method, path string, header http.Header, body []byte) (apiAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		},
	})
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return apiAnswer{}, classed(Permanent, 0, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.client.Do(req)
	if err != nil {
		if egress.Refused(err) {
			return apiAnswer{}, refusedError()
		}
		if wrote.Load() && method == http.MethodPost {
			return apiAnswer{}, classed(Ambiguous, 0, err)
		}
		e := classed(Temporary, 0, err)
		e.RouteDown = !wrote.Load() // nothing was written: the endpoint was not reached
		return apiAnswer{}, e
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return apiAnswer{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

func (c *apiClient) close() { c.client.CloseIdleConnections() }

// retryAfter reads Retry-After (backoff.RetryAfter: seconds or an HTTP date, at
// most backoff.MaxRetryAfter); 0 when absent, unreadable or past.
func retryAfter(h http.Header, now time.Time) time.Duration {
	d, _ := backoff.RetryAfter(h.Get("Retry-After"), now)
	return d
}

// resetAfter reads an X-RateLimit-Reset header holding epoch seconds (SendGrid,
// Mailgun); 0 when absent or past.
func resetAfter(h http.Header, now time.Time) time.Duration {
	n, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	if d := time.Unix(n, 0).Sub(now); d > 0 {
		return d
	}
	return 0
}

// failure builds a classified error from an answer. detail is what the adapter
// parsed from the provider's error body; without it, a short sanitized excerpt of
// the body stands in (never the body itself: it may be long, or not the provider's).
func failure(name string, class Class, a apiAnswer, detail string) *Error {
	if detail == "" {
		detail = snippet(a.body)
	} else {
		detail = snippet([]byte(detail))
	}
	return &Error{Class: class, Code: a.status, Err: fmt.Errorf("%s answered %d: %s", name, a.status, detail)}
}

// rateLimited is a Temporary failure that carries the provider's wait.
func rateLimited(name string, a apiAnswer, wait time.Duration, detail string) *Error {
	e := failure(name, Temporary, a, detail)
	e.RetryAfter = wait
	return e
}

// configError is a failure of the sender's credentials or setup: Temporary for the
// recipient (nothing is wrong with the message), and counted against the sender.
func configError(name string, a apiAnswer, detail string) *Error {
	e := failure(name, Temporary, a, detail)
	e.Config = true
	return e
}

// fromHeader renders a From (or To) header value: `"Name" <addr>` or the bare address.
func fromHeader(name, addr string) string {
	if name == "" {
		return addr
	}
	return (&mail.Address{Name: name, Address: addr}).String()
}

// fitKey derives what carries our job id to a provider whose field holds at most
// max bytes: the id itself when it fits, else a prefix of it and "-" and 32 hex
// digits of its SHA-256, exactly max long. The same id always gives the same value,
// so a replay still deduplicates (Resend's Idempotency-Key) and events still carry
// one value per message. safe maps the prefix onto the field's characters.
func fitKey(id string, max int, safe func(string) string) string {
	if safe == nil {
		safe = func(s string) string { return s }
	}
	if len(id) <= max {
		return safe(id)
	}
	sum := sha256.Sum256([]byte(id))
	digest := hex.EncodeToString(sum[:16])
	prefix := id[:max-len(digest)-1]
	for !utf8.ValidString(prefix) { // never cut a character in half
		prefix = prefix[:len(prefix)-1]
	}
	return safe(prefix) + "-" + digest
}

// tagSafe maps our job id onto the characters provider tags accept
// ([A-Za-z0-9_-]): `campaign:1:2` becomes `campaign_1_2`.
func tagSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// VerifyError says which step of a credentials check failed.
type VerifyError struct {
	// Step is connect, starttls, auth, request or account.
	Step string
	Err  error
}

func (e *VerifyError) Error() string { return e.Step + ": " + e.Err.Error() }

func (e *VerifyError) Unwrap() error { return e.Err }

func verifyErr(step string, err error) error { return &VerifyError{Step: step, Err: err} }

// verifyAnswer turns a no-send call's answer into nil or a VerifyError. Only the
// status and the provider's own error message (a JSON "message" or "name", as
// each API writes it, sanitized and short) come back: never the body as such.
func verifyAnswer(name string, a apiAnswer, err error) error {
	if errors.Is(err, errRefused) {
		return verifyErr("connect", errRefused)
	}
	if err != nil {
		return verifyErr("connect", err)
	}
	detail := ""
	if m := errorMessage(a.body); m != "" {
		detail = ": " + snippet([]byte(m))
	}
	switch {
	case a.status >= 200 && a.status < 300:
		return nil
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden:
		return verifyErr("auth", fmt.Errorf("%s refused the credentials (%d)%s", name, a.status, detail))
	}
	return verifyErr("request", fmt.Errorf("%s answered %d%s", name, a.status, detail))
}

// errorMessage is the error text of a provider's JSON error body ("message",
// "Message", else "name", else the first of SendGrid's "errors"), "" when none.
func errorMessage(body []byte) string {
	var e struct {
		Message  string `json:"message"`
		Message2 string `json:"Message"`
		Name     string `json:"name"`
		Errors   []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	for _, s := range []string{e.Message, e.Message2, e.Name} {
		if s != "" {
			return s
		}
	}
	if len(e.Errors) > 0 {
		return e.Errors[0].Message
	}
	return ""
}

// errRefused is a connection the outgoing-connection guard refused: the
// destination is an internal address (or a name resolving to one). It says no
// more, so a refusal tells nothing about what listens there.
var errRefused = errors.New("destination not allowed")

// refusedError is a send the guard refused: nothing left, and the sender's
// destination is the fault (counted toward pausing it).
func refusedError() *Error {
	return &Error{Class: Temporary, Err: errRefused, Config: true, RouteDown: true}
}

// errNoVerify is answered by senders whose API has no call that checks the
// credentials without sending.
var errNoVerify = errors.New("this sender type has no call that checks credentials without sending")

// ErrNoVerify reports that a sender cannot be checked without sending.
func ErrNoVerify() error { return errNoVerify }
