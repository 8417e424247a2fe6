package webhook_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/httpapi/httpapitest"
	"github.com/sendonce/sendonce/internal/webhook"
)

// The hostile walk of inbound webhooks: for each source, every string of a
// realistic payload (and every member name, and the id header where the source has
// one) gets each hostile value, the delivery is signed VALIDLY for that source, and
// it goes through the real HTTP handler. Text that cannot be stored must be a 4xx
// problem; wrong types and 1 MB strings may be accepted (a provider field we do not
// use) but never a 5xx. A provider retries a 5xx forever.

const hostileMark = "HOSTILE-SENTINEL-7f3a"

type hostileValue struct {
	name, lit string
	text      bool // invalid as text: must be refused
}

var hostileValues = []hostileValue{
	{"escaped NUL", `"a\u0000b"`, true},
	{"invalid UTF-8", "\"caf\xe9\"", true},
	{"UTF-8-encoded surrogate", "\"\xed\xa0\x80\"", true},
	{"lone high surrogate", `"\ud800"`, true},
	{"lone low surrogate", `"x\udc00y"`, true},
	{"1 MB string", `"` + strings.Repeat("x", 1<<20) + `"`, false},
	{"number", `12345`, false},
	{"object", `{"a":"b"}`, false},
	{"array", `["a"]`, false},
	{"null", `null`, false},
}

// jsonSlot is a string value or a member name inside a JSON document.
type jsonSlot struct {
	path []any
	key  bool
}

// slotsOf lists every string value and member name of doc, except under skip.
func slotsOf(doc any, at []any, skip map[string]bool, out *[]jsonSlot) {
	switch v := doc.(type) {
	case string:
		*out = append(*out, jsonSlot{path: at})
	case []any:
		for i, x := range v {
			slotsOf(x, append(append([]any(nil), at...), i), skip, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(append([]any(nil), at...), k)
			if skip[k] {
				continue
			}
			*out = append(*out, jsonSlot{path: p, key: true})
			slotsOf(v[k], p, skip, out)
		}
	}
}

// withHostile marshals doc with lit placed in the slot, as raw bytes.
func withHostile(t *testing.T, doc any, s jsonSlot, lit string) []byte {
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	var cp any
	require.NoError(t, json.Unmarshal(raw, &cp))
	parent := cp
	for _, p := range s.path[:len(s.path)-1] {
		switch p := p.(type) {
		case string:
			parent = parent.(map[string]any)[p]
		case int:
			parent = parent.([]any)[p]
		}
	}
	switch last := s.path[len(s.path)-1].(type) {
	case string:
		m := parent.(map[string]any)
		if s.key {
			m[hostileMark] = m[last]
			delete(m, last)
		} else {
			m[last] = hostileMark
		}
	case int:
		parent.([]any)[last] = hostileMark
	}
	out, err := json.Marshal(cp)
	require.NoError(t, err)
	return bytes.Replace(out, []byte(`"`+hostileMark+`"`), []byte(lit), 1)
}

// source is one provider: a payload template (n makes ids unique per delivery), a
// signer, and the id header it reads, if any.
type source struct {
	name     string
	template func(n int) any
	skip     map[string]bool
	idHeader string
	// sign returns the headers (and possibly a rewritten body) of a valid delivery.
	sign func(t *testing.T, id string, body []byte) (http.Header, []byte)
}

func TestHostileWebhooksGenerated(t *testing.T) {
	t.Parallel()
	f := newFakeSNS(t)
	e := setup(t, f.options())
	handler := httpapitest.New(t, e.pool, config.Default(), func(d *httpapi.Deps) { d.Webhooks = webhook.API{Service: e.svc} })

	stdSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("hostile-secret-0123456789abcdef!"))
	std, _ := e.create(webhook.CreateInput{Source: "standard", Secret: stdSecret})
	rsd, _ := e.create(webhook.CreateInput{Source: "resend", Secret: stdSecret})
	mgKey := "key-0123456789abcdef0123456789abcdef"
	mg, _ := e.create(webhook.CreateInput{Source: "mailgun", Secret: mgKey})
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	require.NoError(t, err)
	sg, _ := e.create(webhook.CreateInput{Source: "sendgrid", Secret: base64.StdEncoding.EncodeToString(der)})
	pm, pmCreds := e.create(webhook.CreateInput{Source: "postmark"})
	ses, _ := e.create(webhook.CreateInput{Source: "ses", TopicARNs: []string{topic}})

	standardSigner := func(prefix string) func(*testing.T, string, []byte) (http.Header, []byte) {
		return func(t *testing.T, id string, body []byte) (http.Header, []byte) {
			return signStandard(t, stdSecret, prefix, id, e.now, body), body
		}
	}
	sources := map[int64]source{
		std.ID: {name: "standard", idHeader: "webhook-id", sign: standardSigner("webhook"), template: func(n int) any {
			return map[string]any{"type": "subscriber.bounced", "data": map[string]any{"email": "w1@example.com",
				"job_id": "job-1", "provider_message_id": "pm-1", "bounce_type": "hard"}}
		}},
		rsd.ID: {name: "resend", idHeader: "svix-id", sign: standardSigner("svix"), template: func(n int) any {
			return map[string]any{"type": "email.bounced", "created_at": "2026-01-01T00:00:00Z", "data": map[string]any{
				"email_id": "re_1", "to": []any{"r@example.com"}, "tags": map[string]any{"job_id": "job-1"},
				"bounce": map[string]any{"type": "Permanent"}}}
		}},
		mg.ID: {name: "mailgun", skip: map[string]bool{"signature": true}, template: func(n int) any {
			return map[string]any{
				"signature": map[string]any{"timestamp": strconv.FormatInt(e.now.Unix(), 10), "token": fmt.Sprintf("tok-%d", n), "signature": "SIGNATURE"},
				"event-data": map[string]any{"event": "failed", "severity": "permanent", "recipient": "m@example.com",
					"user-variables": map[string]any{"job_id": "job-1"}, "message": map[string]any{"headers": map[string]any{"message-id": "mg-1"}}}}
		}, sign: func(t *testing.T, _ string, body []byte) (http.Header, []byte) {
			var env struct {
				Signature struct{ Timestamp, Token string } `json:"signature"`
			}
			_ = json.Unmarshal(body, &env)
			m := hmac.New(sha256.New, []byte(mgKey))
			fmt.Fprintf(m, "%s%s", env.Signature.Timestamp, env.Signature.Token)
			return http.Header{}, bytes.Replace(body, []byte(`"SIGNATURE"`), []byte(`"`+hex.EncodeToString(m.Sum(nil))+`"`), 1)
		}},
		sg.ID: {name: "sendgrid", template: func(n int) any {
			return []any{map[string]any{"email": "g@example.com", "event": "bounce", "type": "bounce",
				"sg_event_id": fmt.Sprintf("e-%d", n), "sg_message_id": "m1.filter0001", "job_id": "job-1", "reason": "550 no such user"}}
		}, sign: func(t *testing.T, _ string, body []byte) (http.Header, []byte) {
			ts := strconv.FormatInt(e.now.Unix(), 10)
			sum := sha256.Sum256(append([]byte(ts), body...))
			sig, err := ecdsa.SignASN1(rand.Reader, priv, sum[:])
			require.NoError(t, err)
			h := http.Header{}
			h.Set("X-Twilio-Email-Event-Webhook-Signature", base64.StdEncoding.EncodeToString(sig))
			h.Set("X-Twilio-Email-Event-Webhook-Timestamp", ts)
			return h, body
		}},
		pm.ID: {name: "postmark", template: func(n int) any {
			return map[string]any{"RecordType": "Bounce", "ID": fmt.Sprintf("%d", 1000+n), "Type": "HardBounce",
				"Email": "p@example.com", "MessageID": "pm-1", "Metadata": map[string]any{"job_id": "job-1"}}
		}, sign: func(t *testing.T, _ string, body []byte) (http.Header, []byte) {
			h := http.Header{}
			h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(pmCreds.Username+":"+pmCreds.Password)))
			return h, body
		}},
		// SES: the hostile value goes into the SES event, which travels as the string
		// Message of a signed SNS envelope (raw invalid bytes are sanitised by that
		// encoding, so only the escapes arrive as sent).
		ses.ID: {name: "ses", template: func(n int) any {
			return map[string]any{"eventType": "Bounce", "mail": map[string]any{"messageId": "ses-1",
				"tags": map[string]any{"job_id": []any{"job-1"}}}, "bounce": map[string]any{"bounceType": "Permanent",
				"bouncedRecipients": []any{map[string]any{"emailAddress": "s@example.com"}}}}
		}, sign: func(t *testing.T, id string, body []byte) (http.Header, []byte) {
			// SNS envelopes are JSON, hence valid UTF-8: Amazon would have replaced
			// invalid bytes before signing, as we do here.
			return http.Header{}, f.sign(t, notification(id, strings.ToValidUTF8(string(body), "\uFFFD")), "2")
		}},
	}

	deliver := func(epID int64, src source, id string, body []byte, idOverride *string) (int, http.Header, []byte) {
		h, signed := src.sign(t, id, body)
		if idOverride != nil && src.idHeader != "" {
			// Re-sign with the hostile id: the header is part of what is signed.
			h, signed = src.sign(t, *idOverride, body)
			h[http.CanonicalHeaderKey(src.idHeader)] = []string{*idOverride}
		}
		req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/v1/webhooks/%s/%d", src.name, epID), bytes.NewReader(signed))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range h {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec.Code, rec.Header(), rec.Body.Bytes()
	}
	check := func(what string, mustRefuse bool, status int, h http.Header, body []byte) {
		t.Helper()
		require.Less(t, status, 500, "%s: %d %.300s", what, status, body)
		if !strings.HasPrefix(what, "mailgun [signature") {
			// Everything is signed validly, except a Mailgun token of the wrong type,
			// which cannot be signed at all.
			require.NotEqual(t, http.StatusUnauthorized, status, "%s: the signature must verify: %.300s", what, body)
		}
		if mustRefuse {
			require.GreaterOrEqual(t, status, 400, "%s: accepted", what)
		}
		if status >= 400 {
			require.Equal(t, "application/problem+json", h.Get("Content-Type"), what)
			var p struct{ Status int }
			require.NoError(t, json.Unmarshal(body, &p), what)
			require.Equal(t, status, p.Status, what)
		}
	}

	n, sent := 0, 0
	ids := make([]int64, 0, len(sources))
	for id := range sources {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, epID := range ids {
		src := sources[epID]
		var slots []jsonSlot
		slotsOf(src.template(0), nil, src.skip, &slots)
		if src.name == "mailgun" {
			slots = append(slots, jsonSlot{path: []any{"signature", "token"}})
		}
		for _, sl := range slots {
			for _, v := range hostileValues {
				if sl.key && !v.text {
					continue
				}
				n++
				body := withHostile(t, src.template(n), sl, v.lit)
				status, h, res := deliver(epID, src, fmt.Sprintf("evt-%d", n), body, nil)
				sent++
				mustRefuse := v.text && !(src.name == "ses" && strings.Contains(v.name, "UTF-8"))
				check(fmt.Sprintf("%s %v%s = %s", src.name, sl.path, map[bool]string{true: " (name)"}[sl.key], v.name), mustRefuse, status, h, res)
			}
		}
		if src.idHeader != "" {
			for _, id := range []string{"a\x00b", "caf\xe9", "\xed\xa0\x80", strings.Repeat("x", 1<<20)} {
				n++
				body, _ := json.Marshal(src.template(n))
				status, h, res := deliver(epID, src, "", body, &id)
				sent++
				if status == http.StatusUnauthorized {
					continue // ids over 256 bytes are refused before the signature is checked
				}
				check(fmt.Sprintf("%s %s header = %.12q", src.name, src.idHeader, id), !strings.HasPrefix(id, "xxx"), status, h, res)
			}
		}
		// Still serving: a clean delivery of this source is applied.
		n++
		body, _ := json.Marshal(src.template(n))
		status, _, res := deliver(epID, src, fmt.Sprintf("evt-clean-%d", n), body, nil)
		require.Equal(t, http.StatusOK, status, "%s clean delivery after the walk: %s", src.name, res)
	}
	t.Logf("hostile webhook deliveries: %d", sent)
	var bad int
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM webhook_events WHERE event_id LIKE '%' || chr(65533) || '%'`).Scan(&bad))
	require.Zero(t, bad, "no event id was stored with replaced characters")
}
