package provider_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
)

// nativeMsg is the message every adapter test sends.
func nativeMsg() provider.Message {
	return provider.Message{JobID: "campaign:7:42", MessageID: "abc@mail.example.com", From: "news@example.com",
		FromName: "News", ReplyTo: "reply@example.com", To: "ada@example.org", ToName: "Ada", Subject: "Hello",
		HTML: "<p>Hi</p>", Text: "Hi", Headers: []provider.Header{
			{Name: "List-Unsubscribe", Value: "<https://u.example/u/t>"},
			{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"}}}
}

// answer is what a fake provider replies.
type answer struct {
	status int
	header map[string]string
	body   string
}

// fake records the one request and replies with a.
func fake(t *testing.T, a answer, check func(r *http.Request, body []byte)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if check != nil {
			check(r, body)
		}
		if refusal := providerLimits(r, body); refusal != nil {
			w.WriteHeader(refusal.status)
			_, _ = io.WriteString(w, refusal.body)
			return
		}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// wantClass asserts the error's class and flags.
func wantClass(t *testing.T, err error, class provider.Class, retryAfter time.Duration, config, suppress bool) {
	t.Helper()
	require.Error(t, err)
	e, ok := provider.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, class, e.Class, "%v", err)
	require.Equal(t, config, e.Config, "config: %v", err)
	require.Equal(t, suppress, e.Suppress, "suppress: %v", err)
	if retryAfter > 0 {
		require.InDelta(t, retryAfter.Seconds(), e.RetryAfter.Seconds(), 2, "%v", err)
	} else {
		require.Zero(t, e.RetryAfter)
	}
}

func TestResendRequest(t *testing.T) {
	t.Parallel()
	url := fake(t, answer{200, nil, `{"id":"re-id-1"}`}, func(r *http.Request, body []byte) {
		require.Equal(t, "POST", r.Method)
		require.Equal(t, "/emails", r.URL.Path)
		require.Equal(t, "Bearer re_key", r.Header.Get("Authorization"))
		require.Equal(t, "campaign:7:42", r.Header.Get("Idempotency-Key"))
		var got map[string]any
		require.NoError(t, json.Unmarshal(body, &got))
		require.Equal(t, `"News" <news@example.com>`, got["from"])
		require.Equal(t, []any{`"Ada" <ada@example.org>`}, got["to"], "the display name goes with the address")
		require.Equal(t, "Hello", got["subject"])
		require.Equal(t, "<p>Hi</p>", got["html"])
		require.Equal(t, "Hi", got["text"])
		require.Equal(t, "reply@example.com", got["reply_to"])
		h := got["headers"].(map[string]any)
		require.Equal(t, "<https://u.example/u/t>", h["List-Unsubscribe"])
		require.Equal(t, "List-Unsubscribe=One-Click", h["List-Unsubscribe-Post"])
		require.Equal(t, "<abc@mail.example.com>", h["Message-ID"])
		require.Equal(t, []any{map[string]any{"name": "job_id", "value": "campaign_7_42"}}, got["tags"])
	})
	p, err := provider.NewResend(provider.NativeSettings{Key: "re_key", BaseURL: url})
	require.NoError(t, err)
	id, err := p.Send(context.Background(), nativeMsg())
	require.NoError(t, err)
	require.Equal(t, "re-id-1", id)
	require.True(t, p.Idempotent())
}

func TestResendErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a      answer
		class  provider.Class
		wait   time.Duration
		config bool
	}{
		{answer{429, map[string]string{"Retry-After": "7"}, `{"statusCode":429,"name":"rate_limit_exceeded","message":"slow"}`}, provider.Temporary, 7 * time.Second, false},
		{answer{429, nil, `{"name":"daily_quota_exceeded"}`}, provider.Temporary, 0, false},
		{answer{500, nil, `{"name":"internal_server_error"}`}, provider.Temporary, 0, false},
		{answer{409, nil, `{"name":"concurrent_idempotent_requests"}`}, provider.Temporary, 0, false},
		{answer{409, nil, `{"name":"invalid_idempotent_request"}`}, provider.Permanent, 0, false},
		{answer{422, nil, `{"name":"validation_error"}`}, provider.Permanent, 0, false},
		{answer{400, nil, `{"name":"invalid_from_address"}`}, provider.Permanent, 0, false},
		{answer{451, nil, `{"name":"security_error"}`}, provider.Permanent, 0, false},
		{answer{401, nil, `{"name":"missing_api_key"}`}, provider.Temporary, 0, true},
		{answer{403, nil, `{"name":"invalid_api_key"}`}, provider.Temporary, 0, true},
	} {
		p, err := provider.NewResend(provider.NativeSettings{Key: "k", BaseURL: fake(t, c.a, nil)})
		require.NoError(t, err)
		_, err = p.Send(context.Background(), nativeMsg())
		wantClass(t, err, c.class, c.wait, c.config, false)
	}
}

func TestPostmarkRequest(t *testing.T) {
	t.Parallel()
	url := fake(t, answer{200, nil, `{"To":"ada@example.org","MessageID":"pm-1","ErrorCode":0,"Message":"OK"}`}, func(r *http.Request, body []byte) {
		require.Equal(t, "/email", r.URL.Path)
		require.Equal(t, "pm-token", r.Header.Get("X-Postmark-Server-Token"))
		require.Equal(t, "application/json", r.Header.Get("Accept"))
		var got map[string]any
		require.NoError(t, json.Unmarshal(body, &got))
		require.Equal(t, `"News" <news@example.com>`, got["From"])
		require.Equal(t, `"Ada" <ada@example.org>`, got["To"])
		require.Equal(t, "Hello", got["Subject"])
		require.Equal(t, "<p>Hi</p>", got["HtmlBody"])
		require.Equal(t, "Hi", got["TextBody"])
		require.Equal(t, "reply@example.com", got["ReplyTo"])
		require.Equal(t, "broadcast", got["MessageStream"])
		require.Equal(t, map[string]any{"job_id": "campaign:7:42"}, got["Metadata"])
		require.Contains(t, got["Headers"], map[string]any{"Name": "List-Unsubscribe", "Value": "<https://u.example/u/t>"})
		require.Contains(t, got["Headers"], map[string]any{"Name": "List-Unsubscribe-Post", "Value": "List-Unsubscribe=One-Click"})
	})
	p, err := provider.NewPostmark(provider.NativeSettings{Key: "pm-token", BaseURL: url}, "broadcast")
	require.NoError(t, err)
	id, err := p.Send(context.Background(), nativeMsg())
	require.NoError(t, err)
	require.Equal(t, "pm-1", id)
	require.False(t, p.Idempotent())
}

func TestPostmarkErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a        answer
		class    provider.Class
		wait     time.Duration
		config   bool
		suppress bool
	}{
		{answer{422, nil, `{"ErrorCode":406,"Message":"You tried to send to recipient(s) that have been marked as inactive."}`}, provider.Permanent, 0, false, true},
		{answer{422, nil, `{"ErrorCode":300,"Message":"Invalid email request"}`}, provider.Permanent, 0, false, false},
		{answer{401, nil, `{"ErrorCode":10,"Message":"Bad or missing Server API token"}`}, provider.Temporary, 0, true, false},
		{answer{422, nil, `{"ErrorCode":400,"Message":"Sender signature not defined"}`}, provider.Temporary, 0, true, false},
		{answer{422, nil, `{"ErrorCode":412,"Message":"account pending"}`}, provider.Temporary, 0, true, false},
		{answer{429, map[string]string{"Retry-After": "3"}, `{"ErrorCode":429,"Message":"rate"}`}, provider.Temporary, 3 * time.Second, false, false},
		{answer{503, nil, ``}, provider.Temporary, 0, false, false},
		{answer{422, nil, `{"ErrorCode":100,"Message":"Maintenance"}`}, provider.Temporary, 0, false, false},
		{answer{500, nil, `{"ErrorCode":0,"Message":"oops"}`}, provider.Ambiguous, 0, false, false},
	} {
		p, err := provider.NewPostmark(provider.NativeSettings{Key: "k", BaseURL: fake(t, c.a, nil)}, "")
		require.NoError(t, err)
		_, err = p.Send(context.Background(), nativeMsg())
		wantClass(t, err, c.class, c.wait, c.config, c.suppress)
	}
}

func TestSendGridRequest(t *testing.T) {
	t.Parallel()
	url := fake(t, answer{202, map[string]string{"X-Message-Id": "sg-1"}, ``}, func(r *http.Request, body []byte) {
		require.Equal(t, "/v3/mail/send", r.URL.Path)
		require.Equal(t, "Bearer SG.key", r.Header.Get("Authorization"))
		var got map[string]any
		require.NoError(t, json.Unmarshal(body, &got))
		require.Equal(t, []any{map[string]any{"to": []any{map[string]any{"email": "ada@example.org", "name": "Ada"}},
			"custom_args": map[string]any{"job_id": "campaign:7:42"}}}, got["personalizations"])
		require.Equal(t, map[string]any{"email": "news@example.com", "name": "News"}, got["from"])
		require.Equal(t, map[string]any{"email": "reply@example.com"}, got["reply_to"])
		require.Equal(t, []any{map[string]any{"type": "text/plain", "value": "Hi"},
			map[string]any{"type": "text/html", "value": "<p>Hi</p>"}}, got["content"])
		h := got["headers"].(map[string]any)
		require.Equal(t, "<https://u.example/u/t>", h["List-Unsubscribe"])
		require.Equal(t, "List-Unsubscribe=One-Click", h["List-Unsubscribe-Post"])
	})
	p, err := provider.NewSendGrid(provider.NativeSettings{Key: "SG.key", BaseURL: url})
	require.NoError(t, err)
	id, err := p.Send(context.Background(), nativeMsg())
	require.NoError(t, err)
	require.Equal(t, "sg-1", id)
	require.False(t, p.Idempotent())
}

func TestSendGridErrors(t *testing.T) {
	t.Parallel()
	reset := time.Now().Add(20 * time.Second).Unix()
	for _, c := range []struct {
		a      answer
		class  provider.Class
		wait   time.Duration
		config bool
	}{
		{answer{429, map[string]string{"X-RateLimit-Reset": itoa64(reset)}, `{"errors":[{"message":"too many"}]}`}, provider.Temporary, 20 * time.Second, false},
		{answer{400, nil, `{"errors":[{"message":"bad","field":"from"}]}`}, provider.Permanent, 0, false},
		{answer{413, nil, ``}, provider.Permanent, 0, false},
		{answer{401, nil, ``}, provider.Temporary, 0, true},
		{answer{403, nil, ``}, provider.Temporary, 0, true},
		{answer{503, nil, ``}, provider.Temporary, 0, false},
		{answer{500, nil, ``}, provider.Ambiguous, 0, false},
	} {
		p, err := provider.NewSendGrid(provider.NativeSettings{Key: "k", BaseURL: fake(t, c.a, nil)})
		require.NoError(t, err)
		_, err = p.Send(context.Background(), nativeMsg())
		wantClass(t, err, c.class, c.wait, c.config, false)
	}
}

func TestMailgunRequest(t *testing.T) {
	t.Parallel()
	url := fake(t, answer{200, nil, `{"id":"<mg-1@mg.example.com>","message":"Queued. Thank you."}`}, func(r *http.Request, _ []byte) {
		require.Equal(t, "/v3/mg.example.com/messages", r.URL.Path)
		u, pw, ok := r.BasicAuth()
		require.True(t, ok)
		require.Equal(t, "api", u)
		require.Equal(t, "key-1", pw)
		require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data"))
		// The body was read by fake; parse the form from a copy instead.
	})
	var form map[string][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseMultipartForm(1<<20))
		form = r.MultipartForm.Value
		_, _ = io.WriteString(w, `{"id":"<mg-1@mg.example.com>"}`)
	}))
	t.Cleanup(srv.Close)
	for _, base := range []string{url, srv.URL} {
		p, err := provider.NewMailgun(provider.NativeSettings{Key: "key-1", BaseURL: base}, "mg.example.com")
		require.NoError(t, err)
		id, err := p.Send(context.Background(), nativeMsg())
		require.NoError(t, err)
		require.Equal(t, "<mg-1@mg.example.com>", id)
	}
	require.Equal(t, []string{`"News" <news@example.com>`}, form["from"])
	require.Equal(t, []string{`"Ada" <ada@example.org>`}, form["to"])
	require.Equal(t, []string{"Hello"}, form["subject"])
	require.Equal(t, []string{"Hi"}, form["text"])
	require.Equal(t, []string{"<p>Hi</p>"}, form["html"])
	require.Equal(t, []string{"campaign:7:42"}, form["v:job_id"])
	require.Equal(t, []string{"<https://u.example/u/t>"}, form["h:List-Unsubscribe"])
	require.Equal(t, []string{"List-Unsubscribe=One-Click"}, form["h:List-Unsubscribe-Post"])
	require.Equal(t, []string{"reply@example.com"}, form["h:Reply-To"])
}

func TestMailgunErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a      answer
		class  provider.Class
		wait   time.Duration
		config bool
	}{
		{answer{429, map[string]string{"Retry-After": "5"}, `{"message":"slow down"}`}, provider.Temporary, 5 * time.Second, false},
		{answer{400, nil, `{"message":"to parameter is not a valid address"}`}, provider.Permanent, 0, false},
		{answer{401, nil, `Forbidden`}, provider.Temporary, 0, true},
		// A wrong or removed domain is the sender's configuration: counted toward its pause.
		{answer{404, nil, `{"message":"Domain not found"}`}, provider.Temporary, 0, true},
		{answer{500, nil, ``}, provider.Ambiguous, 0, false},
	} {
		p, err := provider.NewMailgun(provider.NativeSettings{Key: "k", BaseURL: fake(t, c.a, nil)}, "mg.example.com")
		require.NoError(t, err)
		_, err = p.Send(context.Background(), nativeMsg())
		wantClass(t, err, c.class, c.wait, c.config, false)
	}
}

// TestNativeTransportFailures: a refused connection is Temporary (nothing was
// sent); a connection cut after the request was written is Ambiguous.
func TestNativeTransportFailures(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		hj, _ := w.(http.Hijacker)
		c, _, _ := hj.Hijack()
		c.Close()
	}))
	t.Cleanup(srv.Close)
	p, err := provider.NewPostmark(provider.NativeSettings{Key: "k", BaseURL: srv.URL}, "")
	require.NoError(t, err)
	_, err = p.Send(context.Background(), nativeMsg())
	wantClass(t, err, provider.Ambiguous, 0, false, false)

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	p, err = provider.NewPostmark(provider.NativeSettings{Key: "k", BaseURL: closed.URL}, "")
	require.NoError(t, err)
	_, err = p.Send(context.Background(), nativeMsg())
	wantClass(t, err, provider.Temporary, 0, false, false)
}

// TestNativeVerify: each API's no-send call, with its credentials, and what a
// refusal answers.
func TestNativeVerify(t *testing.T) {
	t.Parallel()
	type verifier interface{ Verify(context.Context) error }
	ok := func(path, header, value string) string {
		return fake(t, answer{200, nil, `{"scopes":["mail.send"]}`}, func(r *http.Request, _ []byte) {
			require.Equal(t, "GET", r.Method)
			require.Equal(t, path, r.URL.Path)
			require.Equal(t, value, r.Header.Get(header))
		})
	}
	rs, _ := provider.NewResend(provider.NativeSettings{Key: "re", BaseURL: ok("/domains", "Authorization", "Bearer re")})
	pm, _ := provider.NewPostmark(provider.NativeSettings{Key: "pm", BaseURL: ok("/server", "X-Postmark-Server-Token", "pm")}, "")
	sg, _ := provider.NewSendGrid(provider.NativeSettings{Key: "sg", BaseURL: ok("/v3/scopes", "Authorization", "Bearer sg")})
	mg, _ := provider.NewMailgun(provider.NativeSettings{Key: "mg", BaseURL: ok("/v4/domains/d.example", "Authorization", "Basic YXBpOm1n")}, "d.example")
	for _, v := range []verifier{rs, pm, sg, mg} {
		require.NoError(t, v.Verify(context.Background()))
	}
	// A sending-only Resend key proves itself valid.
	restricted, _ := provider.NewResend(provider.NativeSettings{Key: "re", BaseURL: fake(t, answer{401, nil, `{"name":"restricted_api_key"}`}, nil)})
	require.NoError(t, restricted.Verify(context.Background()))
	// Refusals name the auth step.
	bad, _ := provider.NewPostmark(provider.NativeSettings{Key: "pm", BaseURL: fake(t, answer{401, nil, `{"ErrorCode":10}`}, nil)}, "")
	var ve *provider.VerifyError
	require.ErrorAs(t, bad.Verify(context.Background()), &ve)
	require.Equal(t, "auth", ve.Step)
	noScope, _ := provider.NewSendGrid(provider.NativeSettings{Key: "sg", BaseURL: fake(t, answer{200, nil, `{"scopes":["stats.read"]}`}, nil)})
	require.ErrorAs(t, noScope.Verify(context.Background()), &ve)
	require.Equal(t, "auth", ve.Step)
	require.ErrorContains(t, ve, "mail.send")
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
