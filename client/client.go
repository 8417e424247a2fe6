package client

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/backoff"
)

// Config says where the service is and how to talk to it.
type Config struct {
	// URL is the service's base URL, e.g. http://127.0.0.1:8080.
	URL string
	// APIKey is sent as Authorization: Bearer on every request.
	APIKey string
	// HTTPClient carries the requests; nil means http.DefaultTransport's. Leave its
	// Timeout zero: Timeout below bounds each call (the event stream has no bound).
	HTTPClient *http.Client
	// Timeout bounds one attempt of a call, reading its answer included; 0 means
	// 60 s. The subscriber import gets at least 11 minutes (the server allows 10).
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt is repeated (network error,
	// 429, 5xx); 0 means 3, negative means none.
	MaxRetries int
	// MaxWait caps one wait between attempts, whatever Retry-After asks; 0 means 30 s.
	MaxWait time.Duration
	// UserAgent is sent on every request; empty means sendonce-go.
	UserAgent string
}

// Client is the sendonce API: every generated operation (ListSubscribersWithResponse,
// ApproveCampaignWithResponse, …) plus the helpers of this package.
type Client struct {
	*ClientWithResponses
	cfg    Config
	stream *http.Client // no overall timeout: a stream lasts as long as the caller reads
}

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("sendonce client: URL is required")
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	if cfg.MaxWait == 0 {
		cfg.MaxWait = 30 * time.Second
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "sendonce-go"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	base := cfg.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	next := base.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	rt := &retryTransport{next: next, cfg: cfg}
	doer := *base
	doer.Transport = rt
	stream := *base
	stream.Timeout = 0
	stream.Transport = &retryTransport{next: next, cfg: Config{APIKey: cfg.APIKey, UserAgent: cfg.UserAgent, MaxRetries: -1, Timeout: -1}}
	gen, err := NewClientWithResponses(strings.TrimRight(cfg.URL, "/"), WithHTTPClient(&doer))
	if err != nil {
		return nil, err
	}
	return &Client{ClientWithResponses: gen, cfg: cfg, stream: &stream}, nil
}

// Error is an answer that is not 2xx: its status and, when the body was an RFC 9457
// problem, the problem (Type, Title, Detail, Errors naming the fields).
type Error struct {
	Status  int
	Problem Problem
}

func (e *Error) Error() string {
	msg := e.Problem.Title
	if e.Problem.Detail != nil && *e.Problem.Detail != "" {
		msg = *e.Problem.Detail
	}
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.Problem.Errors != nil {
		for _, f := range *e.Problem.Errors {
			if f.Detail != msg { // a 422's detail is often its one field error again
				msg += fmt.Sprintf("; %s: %s", f.Pointer, f.Detail)
			}
		}
	}
	return fmt.Sprintf("sendonce: %d %s", e.Status, msg)
}

// StatusCode returns the HTTP status of err when it is (or wraps) an *Error, else 0.
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// response is what every generated *Response has.
type response interface{ StatusCode() int }

// Check returns err, or an *Error when resp is not 2xx, so a call reads
//
//	resp, err := c.GetCampaignWithResponse(ctx, id)
//	if err := client.Check(resp, err); err != nil { … }
func Check[R response](resp R, err error) error {
	if err != nil {
		return err
	}
	code := resp.StatusCode()
	if code >= 200 && code < 300 {
		return nil
	}
	e := &Error{Status: code}
	if body := bodyOf(resp); len(body) > 0 {
		_ = json.Unmarshal(body, &e.Problem)
	}
	return e
}

// bodyOf reads the Body field that every generated response struct has (they share
// no method that returns it).
func bodyOf(resp any) []byte {
	v := reflect.ValueOf(resp)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	if f := v.FieldByName("Body"); f.IsValid() && f.Kind() == reflect.Slice {
		b, _ := f.Interface().([]byte)
		return b
	}
	return nil
}

// retryTransport authenticates every request and repeats one that failed for a
// reason that may pass: a network error, 429 or 5xx. A POST gets an Idempotency-Key
// when it has none, and every attempt carries the same one, so the server does the
// work once however many attempts reach it.
type retryTransport struct {
	next http.RoundTripper
	cfg  Config
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if t.cfg.APIKey != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+t.cfg.APIKey)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", t.cfg.UserAgent)
	}
	if req.Method == http.MethodPost && req.Header.Get("Idempotency-Key") == "" {
		req.Header.Set("Idempotency-Key", NewIdempotencyKey())
	}
	// A body that cannot be read again (a stream, such as an import with a progress
	// reader) is sent once.
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	parent := req.Context()
	for attempt := 0; ; attempt++ {
		resp, err := t.attempt(req)
		if attempt >= t.cfg.MaxRetries || !replayable || parent.Err() != nil || !retryable(resp, err) {
			return resp, err
		}
		pause := wait(attempt, t.cfg.MaxWait)
		if resp != nil {
			if ra, ok := backoff.RetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
				pause = min(ra, t.cfg.MaxWait)
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		timer := time.NewTimer(pause)
		select {
		case <-parent.Done():
			timer.Stop()
			return nil, parent.Err()
		case <-timer.C:
		}
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// attempt sends req once under the call timeout, which lasts until its answer's
// body is closed.
func (t *retryTransport) attempt(req *http.Request) (*http.Response, error) {
	timeout := t.cfg.Timeout
	if timeout < 0 {
		return t.next.RoundTrip(req)
	}
	if strings.HasSuffix(req.URL.Path, "/v1/subscribers/import") {
		timeout = max(timeout, 11*time.Minute)
	}
	ctx, cancel := context.WithTimeout(req.Context(), timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func retryable(resp *http.Response, err error) bool {
	if err != nil {
		return true
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented
}

// wait is the pause before attempt+1 when the server named none: exponential
// from 200 ms, spread over its upper half, capped at max (and at 200 ms·2¹⁰).
func wait(attempt int, max time.Duration) time.Duration {
	return backoff.Jitter(backoff.Exponential{Base: 200 * time.Millisecond, Max: min(max, 200*time.Millisecond<<10)}.Delay(attempt+1), 0.5, 1)
}

// NewIdempotencyKey returns a random key (a version 4 UUID) for one distinct request.
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = crand.Read(b[:]) // never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Key returns a request editor that sets the Idempotency-Key of one call, for a
// caller that wants to choose it (to retry the call later itself):
//
//	c.ApproveCampaignWithResponse(ctx, id, nil, body, client.Key("approve-42"))
func Key(key string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Idempotency-Key", key)
		return nil
	}
}

// Ptr returns a pointer to v, for the optional fields of the generated types:
// SubscriberCreate{Email: "ada@example.com", Name: client.Ptr("Ada")}.
func Ptr[T any](v T) *T { return &v }
