package provider_test

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
)

// tagChars are the characters Resend tags and SES message tags accept.
var tagChars = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// providerLimits is what the real APIs refuse, per their descriptions, applied by
// every fake: Resend's Idempotency-Key and tag values at most 256 characters (tags
// in [A-Za-z0-9_-]), Postmark's Metadata values at most 80. nil when the request
// is within them.
func providerLimits(r *http.Request, body []byte) *answer {
	switch r.URL.Path {
	case "/emails": // Resend
		if len(r.Header.Get("Idempotency-Key")) > 256 {
			return &answer{400, nil, `{"statusCode":400,"name":"validation_error","message":"Idempotency-Key is longer than 256 characters"}`}
		}
		var e struct {
			Tags []struct{ Name, Value string } `json:"tags"`
		}
		_ = json.Unmarshal(body, &e)
		for _, tg := range e.Tags {
			if len(tg.Name) > 256 || len(tg.Value) > 256 || !tagChars.MatchString(tg.Name) || !tagChars.MatchString(tg.Value) {
				return &answer{422, nil, `{"statusCode":422,"name":"validation_error","message":"tags: invalid"}`}
			}
		}
	case "/email": // Postmark
		var e struct {
			Metadata map[string]string `json:"Metadata"`
		}
		_ = json.Unmarshal(body, &e)
		for k, v := range e.Metadata {
			if len(k) > 20 || len(v) > 80 {
				return &answer{422, nil, `{"ErrorCode":300,"Message":"Metadata values must be at most 80 characters"}`}
			}
		}
	}
	return nil
}

// longJob is the job id of a message accepted under a 255-character
// Idempotency-Key, the longest the API takes.
func longJob(last byte) string {
	return "message:12345:" + strings.Repeat("k", 254) + string(last)
}

// TestLongIdempotencyKeysFitProviderLimits: a message under the longest key the
// API accepts goes through every adapter whose API limits the length of what
// carries our job id (the fakes refuse what the real APIs refuse), and what each
// receives is the same on a replay and different for another key.
func TestLongIdempotencyKeysFitProviderLimits(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string][]string{} // provider → what carried the job id, per send
	record := func(name string, v ...string) {
		mu.Lock()
		defer mu.Unlock()
		seen[name] = append(seen[name], strings.Join(v, "|"))
	}
	resendURL := fake(t, answer{200, nil, `{"id":"re-1"}`}, func(r *http.Request, body []byte) {
		var e struct {
			Tags []struct{ Value string } `json:"tags"`
		}
		_ = json.Unmarshal(body, &e)
		record("resend", r.Header.Get("Idempotency-Key"), e.Tags[0].Value)
	})
	postmarkURL := fake(t, answer{200, nil, `{"MessageID":"pm-1","ErrorCode":0}`}, func(_ *http.Request, body []byte) {
		var e struct{ Metadata map[string]string }
		_ = json.Unmarshal(body, &e)
		record("postmark", e.Metadata["job_id"])
	})
	sesURL, _ := sesFake(t, 200, "", func(_ *http.Request, b map[string]any) {
		record("ses", b["EmailTags"].([]any)[0].(map[string]any)["Value"].(string))
	})
	rs, err := provider.NewResend(provider.NativeSettings{Key: "k", BaseURL: resendURL})
	require.NoError(t, err)
	pm, err := provider.NewPostmark(provider.NativeSettings{Key: "k", BaseURL: postmarkURL}, "")
	require.NoError(t, err)
	ses := newSES(t, sesURL)
	for _, job := range []string{longJob('a'), longJob('a'), longJob('b')} {
		m := nativeMsg()
		m.JobID = job
		for name, p := range map[string]provider.Provider{"resend": rs, "postmark": pm, "ses": ses} {
			_, err := p.Send(context.Background(), m)
			require.NoError(t, err, "%s: %s", name, job)
		}
	}
	for name, v := range seen {
		require.Len(t, v, 3, name)
		require.Equal(t, v[0], v[1], "%s: a replay carries the same key", name)
		require.NotEqual(t, v[0], v[2], "%s: another key carries another value", name)
	}
	// Short keys travel as they are (tags with their allowed characters).
	require.Equal(t, "campaign:7:42|campaign_7_42", sendResend(t, rs, seen, &mu))
}

// sendResend sends nativeMsg through rs and returns what carried its job id.
func sendResend(t *testing.T, rs *provider.Resend, seen map[string][]string, mu *sync.Mutex) string {
	t.Helper()
	_, err := rs.Send(context.Background(), nativeMsg())
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	return seen["resend"][len(seen["resend"])-1]
}

// TestSESServiceUnavailableIsTemporary: SES answering 503 ServiceUnavailable took
// nothing; it is retried later like every other adapter's 503, not left unknown.
func TestSESServiceUnavailableIsTemporary(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"ServiceUnavailable", "ServiceUnavailableException"} {
		url, n := sesFake(t, 503, code, nil)
		_, err := newSES(t, url).Send(context.Background(), nativeMsg())
		wantClass(t, err, provider.Temporary, 0, false, false)
		require.EqualValues(t, 1, n.Load())
	}
}

// TestSESEncodesNonASCIIHeaderValues: SES takes header values of printable ASCII
// only (at most 870 characters; the fake refuses others as SES does), so a
// non-ASCII X- header is sent RFC 2047-encoded.
func TestSESEncodesNonASCIIHeaderValues(t *testing.T) {
	t.Parallel()
	var got []any
	url, _ := sesFake(t, 200, "", func(_ *http.Request, b map[string]any) {
		got = b["Content"].(map[string]any)["Simple"].(map[string]any)["Headers"].([]any)
	})
	m := nativeMsg()
	m.Headers = append(m.Headers, provider.Header{Name: "X-Order-Note", Value: "Grüße aus Köln"})
	_, err := newSES(t, url).Send(context.Background(), m)
	require.NoError(t, err)
	note := got[len(got)-1].(map[string]any)
	require.Equal(t, "X-Order-Note", note["Name"])
	require.True(t, strings.HasPrefix(note["Value"].(string), "=?utf-8?"), "%v", note["Value"])
	decoded, err := new(mime.WordDecoder).DecodeHeader(note["Value"].(string))
	require.NoError(t, err)
	require.Equal(t, "Grüße aus Köln", decoded)
}
