package provider

import (
	"bytes"
	"context"
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
	// Transport is for tests and tuning; nil means a transport of its own.
	Transport http.RoundTripper
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
	tr := s.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		tr = t
	}
	return &apiClient{base: base, timeout: s.Timeout, client: &http.Client{
		Transport: tr,
		// A redirected POST may be replayed as a GET without a body: never follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
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
		if wrote.Load() && method == http.MethodPost {
			return apiAnswer{}, classed(Ambiguous, 0, err)
		}
		return apiAnswer{}, classed(Temporary, 0, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return apiAnswer{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

func (c *apiClient) close() { c.client.CloseIdleConnections() }

// retryAfter reads Retry-After as seconds or an HTTP date; 0 when absent.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
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

// failure builds a classified error from an answer.
func failure(name string, class Class, a apiAnswer, detail string) *Error {
	if detail == "" {
		detail = snippet(a.body)
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

// verifyAnswer turns a no-send call's answer into nil or a VerifyError.
func verifyAnswer(name string, a apiAnswer, err error) error {
	if err != nil {
		return verifyErr("connect", err)
	}
	switch {
	case a.status >= 200 && a.status < 300:
		return nil
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden:
		return verifyErr("auth", fmt.Errorf("%s refused the credentials (%d): %s", name, a.status, snippet(a.body)))
	}
	return verifyErr("request", fmt.Errorf("%s answered %d: %s", name, a.status, snippet(a.body)))
}

// errNoVerify is answered by senders whose API has no call that checks the
// credentials without sending.
var errNoVerify = errors.New("this sender type has no call that checks credentials without sending")

// ErrNoVerify reports that a sender cannot be checked without sending.
func ErrNoVerify() error { return errNoVerify }
