package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// apiFake is a provider-shaped HTTP server that records what it was sent.
type apiFake struct {
	mu   sync.Mutex
	auth map[string]int // credential header values seen
	keys map[string]int // job ids seen (Idempotency-Key or metadata)
	to   map[string]int
	srv  *httptest.Server
}

func newAPIFake(t *testing.T, handle func(f *apiFake, r *http.Request, body []byte) (int, string)) *apiFake {
	f := &apiFake{auth: map[string]int{}, keys: map[string]int{}, to: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		status, out := handle(f, r, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *apiFake) count(m map[string]int) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// resendFake answers like Resend and records the Idempotency-Key (deduplicating on it).
func resendFake(t *testing.T) *apiFake {
	return newAPIFake(t, func(f *apiFake, r *http.Request, body []byte) (int, string) {
		var m struct {
			To      []string `json:"to"`
			Subject string   `json:"subject"`
		}
		_ = json.Unmarshal(body, &m)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.auth[r.Header.Get("Authorization")]++
		key := r.Header.Get("Idempotency-Key")
		if f.keys[key] == 0 {
			for _, to := range m.To {
				f.to[to+"|"+m.Subject]++
			}
		}
		f.keys[key]++
		return 200, `{"id":"re-` + key + `"}`
	})
}

// postmarkFake answers like Postmark (status given) and records Metadata.job_id.
func postmarkFake(t *testing.T, status int) *apiFake {
	return newAPIFake(t, func(f *apiFake, r *http.Request, body []byte) (int, string) {
		var m struct {
			To       string            `json:"To"`
			Subject  string            `json:"Subject"`
			Metadata map[string]string `json:"Metadata"`
		}
		_ = json.Unmarshal(body, &m)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.auth[r.Header.Get("X-Postmark-Server-Token")]++
		if status != 200 {
			return status, `{"ErrorCode":10,"Message":"Bad or missing Server API token."}`
		}
		f.keys[m.Metadata["job_id"]]++
		f.to[m.To+"|"+m.Subject]++
		return 200, `{"MessageID":"pm-` + m.Metadata["job_id"] + `","ErrorCode":0,"Message":"OK"}`
	})
}

// TestServeRoutesEachAccountThroughItsSender: two accounts send at once, A through
// its default Resend sender, B through the Postmark sender its campaign names; each
// provider sees only its own account's messages, with its own credential, and test
// sends use the campaign's sender. A third campaign whose sender answers 401 is
// paused after a few failures, with the reason in the API.
func TestServeRoutesEachAccountThroughItsSender(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	accounts := account.NewService(pool)
	accA, keyA, err := accounts.Create(ctx, "a")
	require.NoError(t, err)
	accB, keyB, err := accounts.Create(ctx, "b")
	require.NoError(t, err)
	for _, acc := range []int64{accA.ID, accB.ID} {
		testfactory.New(pool).BulkSubscribers(t, acc, testfactory.Bulk{Prefix: "r", Suffix: "-" + strconv.FormatInt(acc, 10),
			N: 60, Name: "R", Statuses: []string{"confirmed"}})
	}
	fakeA, fakeB, fakeBad := resendFake(t), postmarkFake(t, 200), postmarkFake(t, 401)

	cfg := config.Default()
	cfg.DatabaseURL = pool.Config().ConnString()
	cfg.Addr = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	cfg.Tick = 100 * time.Millisecond
	cfg.UnsubscribeSecret = []string{"k1:a-test-secret-0123456789abcdef"}
	cfg.SecretsKey = []string{sender.NewKeyRingEntry("k1")}
	cfg.EventAllowPrivate = true // the fake providers listen on loopback
	runCtx, cancel := context.WithCancel(ctx)
	addrc, done := make(chan net.Addr, 1), make(chan error, 1)
	go func() {
		done <- run(runCtx, cfg, Options{API: true, Executor: true, OnListen: func(a net.Addr) { addrc <- a }},
			testWriter{t}, testWriter{t})
	}()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a.String()
	case err := <-done:
		t.Fatalf("run returned early: %v", err)
	}
	call := func(key, method, path string, body any) map[string]any {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.Less(t, resp.StatusCode, 300, "%s: %v", path, out)
		return out
	}
	id := func(m map[string]any) int64 { return int64(m["id"].(float64)) }

	call(keyA, "POST", "/v1/senders", map[string]any{"name": "resend", "type": "resend", "default": true,
		"settings": map[string]any{"endpoint": fakeA.srv.URL}, "credentials": map[string]any{"api_key": "re_account_a"}})
	pmB := id(call(keyB, "POST", "/v1/senders", map[string]any{"name": "pm", "type": "postmark",
		"settings": map[string]any{"endpoint": fakeB.srv.URL}, "credentials": map[string]any{"server_token": "token-b"}}))
	badB := id(call(keyB, "POST", "/v1/senders", map[string]any{"name": "broken", "type": "postmark",
		"settings": map[string]any{"endpoint": fakeBad.srv.URL}, "credentials": map[string]any{"server_token": "revoked"}}))

	campA := id(call(keyA, "POST", "/v1/campaigns", map[string]any{"name": "a", "subject": "A news",
		"from_email": "news@a.example", "text_template": "Hi {{.UnsubscribeURL}}"}))
	campB := id(call(keyB, "POST", "/v1/campaigns", map[string]any{"name": "b", "subject": "B news",
		"from_email": "news@b.example", "text_template": "Hi {{.UnsubscribeURL}}", "sender_id": pmB}))
	campBad := id(call(keyB, "POST", "/v1/campaigns", map[string]any{"name": "bad", "subject": "Bad",
		"from_email": "news@b.example", "text_template": "Hi {{.UnsubscribeURL}}", "sender_id": badB}))

	// Test sends go through the campaign's sender (A: its default).
	res := call(keyA, "POST", fmt.Sprintf("/v1/campaigns/%d/test", campA), map[string]any{"emails": []string{"me@a.example"}})
	require.Equal(t, true, res["results"].([]any)[0].(map[string]any)["sent"], "%v", res)
	require.Equal(t, 1, fakeA.count(fakeA.to)["me@a.example|[TEST] A news"])

	for _, c := range []struct {
		key string
		id  int64
	}{{keyA, campA}, {keyB, campB}, {keyB, campBad}} {
		call(c.key, "POST", fmt.Sprintf("/v1/campaigns/%d/approve", c.id), map[string]any{})
	}
	status := func(id int64) string {
		var st string
		require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM campaigns WHERE id = $1`, id).Scan(&st))
		return st
	}
	require.Eventually(t, func() bool { return status(campA) == "sent" && status(campB) == "sent" },
		60*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return status(campBad) == "paused" }, 60*time.Second, 20*time.Millisecond)

	// A's provider saw A's key and A's 60 recipients (plus the test), nothing of B's.
	require.Equal(t, map[string]int{"Bearer re_account_a": 61}, fakeA.count(fakeA.auth))
	for k := range fakeA.count(fakeA.keys) {
		require.True(t, strings.HasPrefix(k, fmt.Sprintf("campaign:%d:", campA)) || strings.HasPrefix(k, "test:"), k)
	}
	require.Len(t, fakeA.count(fakeA.keys), 61)
	require.Len(t, fakeB.count(fakeB.keys), 60)
	for k := range fakeB.count(fakeB.keys) {
		require.True(t, strings.HasPrefix(k, fmt.Sprintf("campaign:%d:", campB)), k)
	}
	require.Equal(t, map[string]int{"token-b": 60}, fakeB.count(fakeB.auth))
	var wrong int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE campaign_id = ANY($1)
		AND (status <> 'sent' OR provider_message_id NOT LIKE CASE WHEN campaign_id = $2 THEN 're-%' ELSE 'pm-%' END)`,
		[]int64{campA, campB}, campA).Scan(&wrong))
	require.Zero(t, wrong)

	// The failing sender paused its campaign, with the reason, and says so itself.
	c := call(keyB, "GET", fmt.Sprintf("/v1/campaigns/%d", campBad), nil)
	require.Contains(t, c["paused_reason"], "auth/config failures in a row")
	require.Contains(t, c["paused_reason"], "401")
	sn := call(keyB, "GET", fmt.Sprintf("/v1/senders/%d", badB), nil)
	require.Contains(t, sn["paused_reason"], "auth/config failures")
	var failed int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'failed'`, campBad).Scan(&failed))
	require.Zero(t, failed, "auth failures fail no recipient")
	// Fixing the credentials clears the sender's pause; resume continues the campaign.
	sn = call(keyB, "PATCH", fmt.Sprintf("/v1/senders/%d", badB), map[string]any{
		"settings": map[string]any{"endpoint": fakeB.srv.URL}, "credentials": map[string]any{"server_token": "token-b"}})
	require.Nil(t, sn["paused_reason"])
	c = call(keyB, "POST", fmt.Sprintf("/v1/campaigns/%d/resume", campBad), nil)
	require.Nil(t, c["paused_reason"])

	// A transactional message leaves through the account's default sender too,
	// never through the environment's provider or another account's sender.
	b, _ := json.Marshal(map[string]any{"to": "buyer@a.example", "from": "shop@a.example", "subject": "Receipt", "text": "Thanks"})
	req, _ := http.NewRequest("POST", base+"/v1/messages", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "receipt-1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Eventually(t, func() bool { return fakeA.count(fakeA.to)["buyer@a.example|Receipt"] == 1 },
		30*time.Second, 20*time.Millisecond)
	require.Equal(t, map[string]int{"Bearer re_account_a": 62}, fakeA.count(fakeA.auth))
	for k := range fakeB.count(fakeB.keys) {
		require.False(t, strings.HasPrefix(k, "message:"), k)
	}
}
