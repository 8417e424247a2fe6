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
	"sort"
	"strings"
	"time"
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
	// The common path, one call per action: c.Messages.Send, c.Subscribers.Create, …
	Subscribers *SubscribersService
	Campaigns   *CampaignsService
	Messages    *MessagesService
	Events      *EventsService

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
	c := &Client{ClientWithResponses: gen, cfg: cfg, stream: &stream}
	c.Subscribers, c.Campaigns, c.Messages, c.Events = &SubscribersService{c}, &CampaignsService{c}, &MessagesService{c}, &EventsService{c}
	return c, nil
}

// Error is an answer that is not 2xx: its status and the RFC 9457 problem the
// service answered with. Type is the problem's type URI (…/problems/invalid,
// …/not_found, …), Detail what went wrong, Fields the fields a 422 names (JSON
// pointer → what is wrong with it). Problem keeps the whole body.
type Error struct {
	Status    int
	Type      string
	Title     string
	Detail    string
	Fields    map[string]string
	RequestID string
	Problem   Problem
}

// Error prints the status and the detail once; field errors that only repeat the
// detail add their field, others their own text.
func (e *Error) Error() string {
	msg := firstOf(e.Detail, e.Problem.Detail, e.Title, e.Problem.Title, http.StatusText(e.Status))
	var same, other []string
	for _, f := range e.fieldErrors() {
		if f.Detail == msg {
			same = append(same, f.Pointer)
		} else {
			other = append(other, f.Pointer+": "+f.Detail)
		}
	}
	if len(same) > 0 {
		msg += " (" + strings.Join(same, ", ") + ")"
	}
	if len(other) > 0 {
		msg += ": " + strings.Join(other, "; ")
	}
	return fmt.Sprintf("sendonce: %d %s", e.Status, msg)
}

// fieldErrors are the problem's field errors in its order, or Fields' (sorted) for
// an Error made by hand.
func (e *Error) fieldErrors() []FieldError {
	if e.Problem.Errors != nil {
		return *e.Problem.Errors
	}
	out := make([]FieldError, 0, len(e.Fields))
	for p, d := range e.Fields {
		out = append(out, FieldError{Pointer: p, Detail: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

func firstOf(xs ...any) string {
	for _, x := range xs {
		switch v := x.(type) {
		case string:
			if v != "" {
				return v
			}
		case *string:
			if v != nil && *v != "" {
				return *v
			}
		}
	}
	return ""
}

// newError reads a problem body (when there is one) into an *Error.
func newError(status int, body []byte) *Error {
	e := &Error{Status: status}
	if len(body) == 0 || json.Unmarshal(body, &e.Problem) != nil {
		return e
	}
	p := e.Problem
	e.Type, e.Title, e.Detail, e.RequestID = p.Type, p.Title, firstOf(p.Detail), firstOf(p.RequestId)
	if p.Errors != nil && len(*p.Errors) > 0 {
		e.Fields = make(map[string]string, len(*p.Errors))
		for _, f := range *p.Errors {
			e.Fields[f.Pointer] = f.Detail
		}
	}
	return e
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
	return newError(code, bodyOf(resp))
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

// holdsSecret reports whether a POST to path answers with a secret (a key's
// token, a login link, a session or second factor of one's own), where the
// server refuses an Idempotency-Key.
func holdsSecret(path string) bool {
	path = strings.TrimSuffix(path, "/")
	return strings.HasSuffix(path, "/v1/api-keys") || strings.HasSuffix(path, "/v1/login-links") || strings.Contains(path, "/v1/me/")
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
	keyless := req.Method == http.MethodPost && holdsSecret(req.URL.Path)
	if req.Method == http.MethodPost && req.Header.Get("Idempotency-Key") == "" && !keyless {
		req.Header.Set("Idempotency-Key", NewIdempotencyKey())
	}
	// A body that cannot be read again (a stream, such as an import with a progress
	// reader) is sent once, and so is a POST whose answer holds a secret: the
	// server refuses an Idempotency-Key there (it never stores the secret for a
	// replay), so a second attempt could do the work twice.
	replayable := (req.Body == nil || req.Body == http.NoBody || req.GetBody != nil) && !keyless
	parent := req.Context()
	for attempt := 0; ; attempt++ {
		resp, err := t.attempt(req)
		if attempt >= t.cfg.MaxRetries || !replayable || parent.Err() != nil || !retryable(resp, err) {
			return resp, err
		}
		pause := wait(attempt, t.cfg.MaxWait)
		if resp != nil {
			if ra, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
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
