package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/sink"
)

// senderID creates a sender as account A and returns its id.
func senderID(t *testing.T, e *env, body map[string]any) string {
	t.Helper()
	res := e.do(e.keyA, "POST", "/v1/senders", body)
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	return itoa(int64(decodeAs[map[string]any](t, res)["id"].(float64)))
}

// repoint changes a stored sender's settings behind the API's back: what a sender
// saved while private destinations were allowed, or one whose name resolves to an
// internal address, looks like to the process that uses it.
func repoint(t *testing.T, e *env, id, settings string) {
	t.Helper()
	_, err := e.pool.Exec(context.Background(), `UPDATE senders SET settings = $1::jsonb, updated_at = now() WHERE id = $2`, settings, id)
	require.NoError(t, err)
}

// TestSendersRefuseInternalDestinations: a sender aimed at the cloud metadata
// address, a private address or this machine's database port is refused when
// saved (422 naming the field), on create and on update.
func TestSendersRefuseInternalDestinations(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, c := range []struct {
		body    map[string]any
		pointer string
	}{
		{map[string]any{"name": "h", "type": "http", "settings": map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}}, "/settings/url"},
		{map[string]any{"name": "r", "type": "resend", "settings": map[string]any{"endpoint": "https://10.0.0.1"},
			"credentials": map[string]any{"api_key": "re_123"}}, "/settings/endpoint"},
		{map[string]any{"name": "s", "type": "smtp", "settings": map[string]any{"host": "127.0.0.1", "port": 5432}}, "/settings/host"},
		{map[string]any{"name": "s", "type": "smtp", "settings": map[string]any{"host": "localhost", "port": 25}}, "/settings/host"},
		{map[string]any{"name": "ses", "type": "ses", "settings": map[string]any{"region": "us-east-1", "endpoint": "http://[::1]:4566"},
			"credentials": map[string]any{"access_key_id": "a", "secret_access_key": "b"}}, "/settings/endpoint"},
	} {
		res := e.do(e.keyA, "POST", "/v1/senders", c.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", c.body, res.Body)
		require.Equal(t, []string{c.pointer}, decodeAs[problem](t, res).pointers())
	}
	id := senderID(t, e, map[string]any{"name": "h", "type": "http", "settings": map[string]any{"url": "https://mail.example.com/send"}})
	res := e.do(e.keyA, "PATCH", "/v1/senders/"+id, map[string]any{"settings": map[string]any{"url": "http://127.0.0.1:5432/"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Equal(t, []string{"/settings/url"}, decodeAs[problem](t, res).pointers())
}

// TestSenderURLRefusesUserinfo: a password in an http sender's URL would be stored
// and shown in clear by every read; credentials go in credentials.
func TestSenderURLRefusesUserinfo(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, body := range []map[string]any{
		{"name": "h", "type": "http", "settings": map[string]any{"url": "https://app:PASS@mail.example.com/send"}},
		{"name": "r", "type": "resend", "settings": map[string]any{"endpoint": "https://app:PASS@proxy.example.com"},
			"credentials": map[string]any{"api_key": "re_123"}},
	} {
		res := e.do(e.keyA, "POST", "/v1/senders", body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
		p := decodeAs[problem](t, res).pointers()
		require.Len(t, p, 1)
		require.Contains(t, []string{"/settings/url", "/settings/endpoint"}, p[0])
		require.NotContains(t, string(res.Body), "PASS")
	}
}

// TestSenderVerifyCannotReachInternalServices: verify of senders whose destination
// is internal (saved when allowed, or a name resolving inward) says only
// "destination not allowed": no internal body comes back, and an SMTP port that
// answers looks exactly like one that is closed.
func TestSenderVerifyCannotReachInternalServices(t *testing.T) {
	t.Parallel()
	e := setup(t)
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `INTERNAL-ONLY-DATA {"db_password":"hunter2"}`)
	}))
	t.Cleanup(internal.Close)
	relay := sink.NewSMTP(sink.SMTPOptions{})
	relayAddr, err := relay.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { relay.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := ln.Addr().String()
	ln.Close()

	rs := senderID(t, e, map[string]any{"name": "r", "type": "resend", "credentials": map[string]any{"api_key": "re_123"}})
	repoint(t, e, rs, `{"endpoint":"`+internal.URL+`"}`)
	v := decodeAs[map[string]any](t, e.do(e.keyA, "POST", "/v1/senders/"+rs+"/verify", nil))
	require.Equal(t, false, v["ok"])
	require.NotContains(t, v["message"], "INTERNAL-ONLY-DATA")
	require.Equal(t, "destination not allowed", v["message"])

	var answers []string
	for _, addr := range []string{relayAddr, closedAddr} {
		host, port, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(port)
		id := senderID(t, e, map[string]any{"name": "s", "type": "smtp", "settings": map[string]any{"host": "smtp.example.com", "port": 25, "security": "none"}})
		repoint(t, e, id, `{"host":"`+host+`","port":`+strconv.Itoa(n)+`,"security":"none"}`)
		res := e.do(e.keyA, "POST", "/v1/senders/"+id+"/verify", nil)
		require.Equal(t, http.StatusOK, res.Status)
		answers = append(answers, string(res.Body))
	}
	require.JSONEq(t, `{"ok":false,"step":"connect","message":"destination not allowed"}`, answers[0])
	require.Equal(t, answers[0], answers[1], "an open internal port answers as a closed one does")
}

// TestCampaignTestSendCannotReachInternalServices: a campaign test send through an
// http sender aimed at a loopback listener is refused at connect time, from the
// API process, and nothing reaches the listener.
func TestCampaignTestSendCannotReachInternalServices(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var hits atomic.Int64
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, `{"id":"x"}`)
	}))
	t.Cleanup(internal.Close)
	id := senderID(t, e, map[string]any{"name": "h", "type": "http", "settings": map[string]any{"url": "https://mail.example.com/send"}})
	repoint(t, e, id, `{"url":"`+internal.URL+`/send"}`)
	sid, _ := strconv.ParseInt(id, 10, 64)
	c := createCampaign(t, e, map[string]any{"sender_id": sid})
	res := e.do(e.keyA, "POST", "/v1/campaigns/"+itoa(c.Id)+"/test", map[string]any{"emails": []string{"me@example.com"}})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	out := decodeAs[api.TestSendResult](t, res)
	require.False(t, out.Results[0].Sent)
	require.Zero(t, hits.Load(), "nothing reached the loopback listener")
}

// TestSenderRepointRequiresCredentials: changing where a sender's stored
// credentials go (url, endpoint, host, port, region, domain) without giving them
// again is refused (422 naming /credentials): otherwise whoever holds an API key
// could aim the sender at their own server and receive the stored secret.
func TestSenderRepointRequiresCredentials(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, c := range []struct {
		create, patch map[string]any
	}{
		{map[string]any{"name": "pm", "type": "postmark", "credentials": map[string]any{"server_token": "pm-token-0123456789"}},
			map[string]any{"endpoint": "https://collector.example.net"}},
		{map[string]any{"name": "h", "type": "http", "settings": map[string]any{"url": "https://mail.example.com/send"},
			"credentials": map[string]any{"authorization": "Bearer k-0123456789"}},
			map[string]any{"url": "https://collector.example.net/send"}},
		{map[string]any{"name": "s", "type": "smtp", "settings": map[string]any{"host": "smtp.example.com", "port": 587, "username": "app"},
			"credentials": map[string]any{"password": "pw-0123456789"}},
			map[string]any{"host": "collector.example.net", "port": 587, "username": "app"}},
		{map[string]any{"name": "s", "type": "smtp", "settings": map[string]any{"host": "smtp.example.com", "port": 587, "username": "app"},
			"credentials": map[string]any{"password": "pw-0123456789"}},
			map[string]any{"host": "smtp.example.com", "port": 2525, "username": "app"}},
		{map[string]any{"name": "ses", "type": "ses", "settings": map[string]any{"region": "us-east-1"},
			"credentials": map[string]any{"access_key_id": "AKIA1", "secret_access_key": "s-0123456789"}},
			map[string]any{"region": "eu-west-1"}},
		{map[string]any{"name": "mg", "type": "mailgun", "settings": map[string]any{"domain": "mg.example.com"},
			"credentials": map[string]any{"api_key": "key-0123456789"}},
			map[string]any{"domain": "mg.example.net"}},
		{map[string]any{"name": "sg", "type": "sendgrid", "credentials": map[string]any{"api_key": "SG.0123456789"}},
			map[string]any{"region": "eu"}},
	} {
		id := senderID(t, e, c.create)
		res := e.do(e.keyA, "PATCH", "/v1/senders/"+id, map[string]any{"settings": c.patch})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", c.patch, res.Body)
		require.Equal(t, []string{"/credentials"}, decodeAs[problem](t, res).pointers())
		// Unchanged, and with the credentials given again the change is taken.
		got := decodeAs[map[string]any](t, e.do(e.keyA, "GET", "/v1/senders/"+id, nil))
		want := c.create["settings"]
		if want == nil {
			want = map[string]any{}
		}
		wantJSON, _ := json.Marshal(want)
		gotJSON, _ := json.Marshal(got["settings"])
		require.JSONEq(t, string(wantJSON), string(gotJSON), "a refused change changes nothing")
		res = e.do(e.keyA, "PATCH", "/v1/senders/"+id, map[string]any{"settings": c.patch, "credentials": c.create["credentials"]})
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
		// Changes that leave the destination alone need no credentials.
		res = e.do(e.keyA, "PATCH", "/v1/senders/"+id, map[string]any{"rate_per_second": 3, "settings": c.patch})
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	}
}
