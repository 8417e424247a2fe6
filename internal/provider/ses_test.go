package provider_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
)

// sesFake answers SendEmail like SES v2 (REST-JSON: the error code in
// X-Amzn-ErrorType) and counts the attempts it saw.
func sesFake(t *testing.T, status int, code string, check func(r *http.Request, body map[string]any)) (string, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		if check != nil {
			check(r, body)
		}
		w.Header().Set("Content-Type", "application/json")
		if msg := sesLimits(body); msg != "" {
			w.Header().Set("X-Amzn-ErrorType", "BadRequestException")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"message":"`+msg+`"}`)
			return
		}
		if code != "" {
			w.Header().Set("X-Amzn-ErrorType", code)
			w.WriteHeader(status)
			_, _ = io.WriteString(w, `{"message":"fake `+code+`"}`)
			return
		}
		_, _ = io.WriteString(w, `{"MessageId":"ses-1"}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

func newSES(t *testing.T, url string) *provider.SES {
	t.Helper()
	p, err := provider.NewSES(provider.SESSettings{Region: "us-east-1", AccessKeyID: "AKIDEXAMPLE",
		SecretAccessKey: "secret", ConfigurationSet: "events", BaseURL: url})
	require.NoError(t, err)
	return p
}

func TestSESRequest(t *testing.T) {
	t.Parallel()
	url, n := sesFake(t, 200, "", func(r *http.Request, b map[string]any) {
		require.Equal(t, "POST", r.Method)
		require.Equal(t, "/v2/email/outbound-emails", r.URL.Path)
		require.True(t, strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"))
		require.Equal(t, `"News" <news@example.com>`, b["FromEmailAddress"])
		require.Equal(t, map[string]any{"ToAddresses": []any{`"Ada" <ada@example.org>`}}, b["Destination"])
		require.Equal(t, []any{"reply@example.com"}, b["ReplyToAddresses"])
		require.Equal(t, "events", b["ConfigurationSetName"])
		require.Equal(t, []any{map[string]any{"Name": "job_id", "Value": "campaign_7_42"}}, b["EmailTags"])
		simple := b["Content"].(map[string]any)["Simple"].(map[string]any)
		require.Equal(t, "Hello", simple["Subject"].(map[string]any)["Data"])
		body := simple["Body"].(map[string]any)
		require.Equal(t, "Hi", body["Text"].(map[string]any)["Data"])
		require.Equal(t, "<p>Hi</p>", body["Html"].(map[string]any)["Data"])
		require.Equal(t, []any{
			map[string]any{"Name": "List-Unsubscribe", "Value": "<https://u.example/u/t>"},
			map[string]any{"Name": "List-Unsubscribe-Post", "Value": "List-Unsubscribe=One-Click"},
		}, simple["Headers"], "SES replaces Message-ID, so none is sent")
	})
	id, err := newSES(t, url).Send(context.Background(), nativeMsg())
	require.NoError(t, err)
	require.Equal(t, "ses-1", id)
	require.EqualValues(t, 1, n.Load())
}

// TestSESErrors: each documented code gets its class, and every failure is one
// attempt: the SDK's retryer, which would repeat a 500 or 429 SendEmail, is off.
func TestSESErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status int
		code   string
		class  provider.Class
		config bool
	}{
		{500, "InternalServiceErrorException", provider.Ambiguous, false},
		{429, "TooManyRequestsException", provider.Temporary, false},
		{400, "LimitExceededException", provider.Temporary, false},
		{400, "ThrottlingException", provider.Temporary, false},
		{400, "MessageRejected", provider.Permanent, false},
		{400, "BadRequestException", provider.Permanent, false},
		{404, "NotFoundException", provider.Permanent, false},
		{400, "AccountSuspendedException", provider.Temporary, true},
		{400, "SendingPausedException", provider.Temporary, true},
		{400, "MailFromDomainNotVerifiedException", provider.Temporary, true},
		{403, "UnrecognizedClientException", provider.Temporary, true},
	} {
		url, n := sesFake(t, c.status, c.code, nil)
		_, err := newSES(t, url).Send(context.Background(), nativeMsg())
		wantClass(t, err, c.class, 0, c.config, false)
		require.EqualValues(t, 1, n.Load(), "%s: attempts", c.code)
	}
}

func TestSESVerify(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body string
		step string
	}{{`{"SendingEnabled":true}`, ""}, {`{"SendingEnabled":false}`, "account"}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			require.Equal(t, "GET", r.Method)
			require.Equal(t, "/v2/email/account", r.URL.Path)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, c.body)
		}))
		err := newSES(t, srv.URL).Verify(context.Background())
		srv.Close()
		if c.step == "" {
			require.NoError(t, err)
			continue
		}
		var ve *provider.VerifyError
		require.ErrorAs(t, err, &ve)
		require.Equal(t, c.step, ve.Step)
	}
}

// sesLimits is what SES refuses in a SendEmail request, per its model and
// documentation: message tag values of [A-Za-z0-9_-] up to 256 characters, header
// values of printable ASCII up to 870. "" when the request is within them.
func sesLimits(body map[string]any) string {
	tags, _ := body["EmailTags"].([]any)
	for _, tg := range tags {
		v, _ := tg.(map[string]any)["Value"].(string)
		if len(v) > 256 || !tagChars.MatchString(v) {
			return "invalid message tag value"
		}
	}
	content, _ := body["Content"].(map[string]any)
	simple, _ := content["Simple"].(map[string]any)
	headers, _ := simple["Headers"].([]any)
	for _, h := range headers {
		v, _ := h.(map[string]any)["Value"].(string)
		if len(v) > 870 {
			return "header value too long"
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				return "header values must be printable ASCII"
			}
		}
	}
	return ""
}
