package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
)

// TestSendersCredentialsWriteOnly: no response of any sender route carries the
// secret, only its hint; new credentials replace the hint.
func TestSendersCredentialsWriteOnly(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const token = "pm-secret-token-aaaa-bbbb-1234"
	res := e.do(e.keyA, "POST", "/v1/senders", map[string]any{"name": "pm", "type": "postmark",
		"settings": map[string]any{"message_stream": "broadcast"}, "credentials": map[string]any{"server_token": token},
		"rate_per_second": 5, "max_connections": 2, "allowed_from": []string{"example.com", "ceo@example.org"}, "default": true})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	sn := decodeAs[map[string]any](t, res)
	id := itoa(int64(sn["id"].(float64)))
	require.Equal(t, "…1234", sn["credentials_hint"])
	require.Equal(t, false, sn["idempotent"])
	require.Equal(t, true, sn["default"])
	require.Nil(t, sn["paused_reason"])
	for _, r := range []response{res, e.do(e.keyA, "GET", "/v1/senders/"+id, nil), e.do(e.keyA, "GET", "/v1/senders", nil),
		e.do(e.keyA, "PATCH", "/v1/senders/"+id, map[string]any{"rate_per_second": 7})} {
		require.NotContains(t, string(r.Body), token)
		require.NotContains(t, string(r.Body), "credentials\"")
	}
	res = e.do(e.keyA, "PATCH", "/v1/senders/"+id, map[string]any{"credentials": map[string]any{"server_token": "another-token-zzzz9876"}})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	sn = decodeAs[map[string]any](t, res)
	require.Equal(t, "…9876", sn["credentials_hint"])
	require.EqualValues(t, 7, sn["rate_per_second"])

	res = e.do(e.keyA, "DELETE", "/v1/senders/"+id, nil)
	require.Equal(t, http.StatusNoContent, res.Status)
	res = e.do(e.keyA, "GET", "/v1/senders/"+id, nil)
	require.Equal(t, http.StatusNotFound, res.Status)
}

// TestSendersHostileInput: every refusal is a 422 naming the field, and nothing is stored.
func TestSendersHostileInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, c := range []struct {
		body    any
		pointer string
	}{
		{map[string]any{"name": "x", "type": "pigeon"}, "/type"},
		{map[string]any{"name": "x", "type": "resend"}, "/credentials/api_key"},
		{map[string]any{"name": "x", "type": "resend", "credentials": map[string]any{"api_key": "k", "password": "p"}}, "/credentials/password"},
		{map[string]any{"name": "x", "type": "resend", "settings": map[string]any{"host": "h"}, "credentials": map[string]any{"api_key": "k"}}, "/settings/host"},
		{map[string]any{"name": "x", "type": "smtp", "settings": map[string]any{"host": "h", "port": 70000}}, "/settings/port"},
		{map[string]any{"name": "x", "type": "http", "settings": map[string]any{"url": "javascript:alert(1)"}}, "/settings/url"},
		{map[string]any{"name": "x", "type": "mailgun", "settings": map[string]any{"region": "mars", "domain": "d.example"}, "credentials": map[string]any{"api_key": "k"}}, "/settings/region"},
		{map[string]any{"name": "x\u0000", "type": "http", "settings": map[string]any{"url": "https://x.example"}}, "/name"},
		{map[string]any{"name": strings.Repeat("x", 201), "type": "http", "settings": map[string]any{"url": "https://x.example"}}, "/name"},
		{map[string]any{"name": "x", "type": "http", "settings": map[string]any{"url": "https://x.example"}, "rate_per_second": -1}, "/rate_per_second"},
		{map[string]any{"name": "x", "type": "http", "settings": map[string]any{"url": "https://x.example"}, "allowed_from": []string{"@@"}}, "/allowed_from/0"},
		{map[string]any{"name": "x", "type": "http", "settings": map[string]any{"url": "https://x.example"}, "unknown": 1}, "/unknown"},
		{map[string]any{"name": 5, "type": "http"}, "/name"},
		{map[string]any{"name": "x", "type": "http", "settings": map[string]any{"url": "https://x.example"},
			"credentials": map[string]any{"authorization": "Bearer a\r\nX-Injected: 1"}}, "/credentials/authorization"},
	} {
		res := e.do(e.keyA, "POST", "/v1/senders", c.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", c.body, res.Body)
		require.Contains(t, string(res.Body), c.pointer, "%v", c.body)
	}
	res := e.do(e.keyA, "GET", "/v1/senders", nil)
	require.JSONEq(t, `{"data":[],"next_cursor":null}`, string(res.Body))
	for _, p := range []string{"/v1/senders/0", "/v1/senders/-1", "/v1/senders/abc", "/v1/senders/99999999999999999999"} {
		res := e.do(e.keyA, "GET", p, nil)
		require.Contains(t, []int{http.StatusNotFound, http.StatusUnprocessableEntity}, res.Status, p)
	}
}

// TestSenderVerify: the verify route reports success, and the failing step.
func TestSenderVerify(t *testing.T) {
	t.Parallel()
	// The fake provider listens on loopback: the development switch lets senders reach it.
	e := setup(t, func(c *config.Config) { c.EventAllowPrivate = true })
	pm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Postmark-Server-Token") != "good-token" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"ErrorCode":10,"Message":"Bad or missing Server API token."}`))
			return
		}
		_, _ = w.Write([]byte(`{"ID":1,"Name":"server"}`))
	}))
	t.Cleanup(pm.Close)
	create := func(token string) string {
		res := e.do(e.keyA, "POST", "/v1/senders", map[string]any{"name": "pm", "type": "postmark",
			"settings": map[string]any{"endpoint": pm.URL}, "credentials": map[string]any{"server_token": token}})
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
		return itoa(int64(decodeAs[map[string]any](t, res)["id"].(float64)))
	}
	res := e.do(e.keyA, "POST", "/v1/senders/"+create("good-token")+"/verify", nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.JSONEq(t, `{"ok":true,"message":"the provider accepted the credentials"}`, string(res.Body))
	res = e.do(e.keyA, "POST", "/v1/senders/"+create("bad-token")+"/verify", nil)
	require.Equal(t, http.StatusOK, res.Status)
	v := decodeAs[map[string]any](t, res)
	require.Equal(t, false, v["ok"])
	require.Equal(t, "auth", v["step"])
	require.Contains(t, v["message"], "Bad or missing Server API token")
	res = e.do(e.keyA, "POST", "/v1/senders", map[string]any{"name": "h", "type": "http", "settings": map[string]any{"url": "https://h.example"}})
	require.Equal(t, http.StatusCreated, res.Status)
	id := itoa(int64(decodeAs[map[string]any](t, res)["id"].(float64)))
	v = decodeAs[map[string]any](t, e.do(e.keyA, "POST", "/v1/senders/"+id+"/verify", nil))
	require.Equal(t, false, v["ok"])
	require.Contains(t, v["message"], "without sending")
}

// TestSenderPacingOverHTTP: domain limits and a warm-up go through the wire and
// back; bad ones are a 422 naming the field; an edit replaces and clears them.
func TestSenderPacingOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t)
	base := func(extra map[string]any) map[string]any {
		b := map[string]any{"name": "x", "type": "http", "settings": map[string]any{"url": "https://x.example"}}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	for pointer, extra := range map[string]map[string]any{
		"/domain_limits/0/group":      {"domain_limits": []any{map[string]any{"group": "hotmail", "per_second": 1}}},
		"/domain_limits/0/per_second": {"domain_limits": []any{map[string]any{"domain": "example.org", "per_second": 0}}},
		"/warmup/start":               {"warmup": map[string]any{"preset": "standard", "start": "soon"}},
		"/warmup/caps/0":              {"warmup": map[string]any{"caps": []int{-5}, "start": "2026-12-01"}},
	} {
		res := e.do(e.keyA, "POST", "/v1/senders", base(extra))
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", extra, res.Body)
		require.Contains(t, string(res.Body), pointer, "%v", extra)
	}
	res := e.do(e.keyA, "POST", "/v1/senders", base(map[string]any{
		"domain_limits": []any{map[string]any{"group": "gmail", "per_second": 5}, map[string]any{"domain": "example.org", "per_second": 0.5}},
		"warmup":        map[string]any{"caps": []int{10, 20}, "start": "2020-01-01"}}))
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	sn := decodeAs[map[string]any](t, res)
	require.Equal(t, []any{map[string]any{"group": "gmail", "per_second": 5.0}, map[string]any{"domain": "example.org", "per_second": 0.5}},
		sn["domain_limits"])
	require.Equal(t, map[string]any{"caps": []any{10.0, 20.0}, "start": "2020-01-01"}, sn["warmup"])
	today := sn["warmup_today"].(map[string]any)
	require.Nil(t, today["cap"], "a schedule that is over caps nothing")
	require.Greater(t, today["day_number"].(float64), 2.0)
	id := itoa(int64(sn["id"].(float64)))
	res = e.do(e.keyA, "PATCH", "/v1/senders/"+id, map[string]any{"domain_limits": []any{}, "clear_warmup": true})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	sn = decodeAs[map[string]any](t, res)
	require.Equal(t, []any{}, sn["domain_limits"])
	require.Nil(t, sn["warmup"])
	require.Nil(t, sn["warmup_today"])
}
