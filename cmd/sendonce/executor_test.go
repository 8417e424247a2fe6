package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestServeSendsAnApprovedCampaignThroughTheHTTPProvider runs the real service with
// the default 60s tick and the http provider pointed at the deduplicating sink, then
// creates and approves a campaign through the API. Only the approval's NOTIFY can
// start it in time; the test logs approval → first delivery.
func TestServeSendsAnApprovedCampaignThroughTheHTTPProvider(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	acc, key, err := account.NewService(pool).Create(ctx, "acme")
	require.NoError(t, err)
	testfactory.New(pool).BulkSubscribers(t, acc.ID, testfactory.Bulk{Prefix: "r", N: 200, Name: "R", NumberName: true,
		Statuses: []string{"confirmed"}})

	s := sink.NewHTTP(sink.HTTPOptions{KeepDeliveries: true})
	sinkURL, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })

	cfg := config.Default()
	require.Equal(t, 60*time.Second, cfg.Tick)
	cfg.Provider = "http"
	cfg.HTTPProviderURL = sinkURL + "/send"
	base, post := serve(t, pool, cfg, key)
	c := post("/v1/campaigns", map[string]any{"name": "launch", "subject": "Hi {{.Name}}",
		"from_email": "news@example.com", "text_template": "Hello {{.Name}}, bye: {{.UnsubscribeURL}}"})
	id := int64(c["id"].(float64))
	approved := time.Now()
	post(fmt.Sprintf("/v1/campaigns/%d/approve", id), map[string]any{})
	require.Eventually(t, func() bool { return s.Stats().Unique > 0 }, 10*time.Second, time.Millisecond)
	t.Logf("approval → first delivery: %s (SENDONCE_TICK=60s)", time.Since(approved))

	require.Eventually(t, func() bool {
		var st string
		_ = pool.QueryRow(ctx, `SELECT status FROM campaigns WHERE id = $1`, id).Scan(&st)
		return st == "sent"
	}, 30*time.Second, 10*time.Millisecond)
	st := s.Stats()
	require.Equal(t, int64(200), st.Unique)
	require.Zero(t, st.Duplicates)
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(metrics), `sendonce_sends_total{status="sent"} 200`)
	for _, name := range []string{"sendonce_claim_seconds", "sendonce_ack_batch_size", "sendonce_provider_seconds",
		"sendonce_active_campaigns", "sendonce_queued_rows"} {
		require.Contains(t, string(metrics), name)
	}
	delivered := map[string]int{}
	for k, d := range s.Deliveries() {
		require.Regexp(t, fmt.Sprintf(`^campaign:%d:\d+$`, id), k)
		require.Contains(t, string(d.Body), "/u/")
		delivered[k] = 1 // the sink drops replays of a key (counted in Duplicates, zero above)
	}
	invariant.Require(t, pool, invariant.Options{Delivered: delivered, Recipients: map[int64]int64{id: 200}})
}

// serve runs the real service (API and executor) on pool's database with cfg and,
// once its executor listens, returns its base URL and a function that POSTs JSON
// with key (and a fresh Idempotency-Key) and decodes the answer (failing the test on an error status).
func serve(t *testing.T, pool *pgxpool.Pool, cfg config.Config, key string) (string, func(path string, body any) map[string]any) {
	t.Helper()
	ctx := context.Background()
	cfg.DatabaseURL = pool.Config().ConnString()
	cfg.Addr = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	cfg.UnsubscribeSecret = []string{"k1:a-test-secret-0123456789abcdef"}
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
	// The executor's first pass and its LISTEN happen at start; wait for the LISTEN.
	require.Eventually(t, func() bool {
		var n int
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND query LIKE 'LISTEN%'`).Scan(&n)
		return n == 1
	}, 30*time.Second, 10*time.Millisecond)
	return base, func(path string, body any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", rand.Text()) // required by POST /v1/messages, accepted by every POST
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.Less(t, resp.StatusCode, 300, "%s: %v", path, out)
		return out
	}
}

// TestServeDeliversAMessagesOutcomeToItsEndpoint: a tenant that only sends
// messages gets each message's send.sent at its event endpoint, though no event
// row follows the acknowledgement's batch that holds it (the fan-out once looked
// for endpoints behind in event rows only, and the outcome waited for the next).
func TestServeDeliversAMessagesOutcomeToItsEndpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	_, key, err := account.NewService(pool).Create(ctx, "shop")
	require.NoError(t, err)
	s := sink.NewHTTP(sink.HTTPOptions{})
	sinkURL, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	var mu sync.Mutex
	var got []string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(body))
		mu.Unlock()
	}))
	t.Cleanup(rcv.Close)

	cfg := config.Default()
	cfg.Provider = "http"
	cfg.HTTPProviderURL = sinkURL + "/send"
	cfg.EventAllowHTTP, cfg.EventAllowPrivate = true, true
	_, post := serve(t, pool, cfg, key)
	post("/v1/event-endpoints", map[string]any{"url": rcv.URL + "/hook", "event_types": []string{"send.sent"}})
	for i := range 2 {
		m := post("/v1/messages", map[string]any{"to": fmt.Sprintf("ada%d@example.com", i), "from": "shop@example.com",
			"subject": "Receipt", "text": "Thanks"})
		id := int64(m["id"].(float64))
		named := regexp.MustCompile(fmt.Sprintf(`"message_id":\s*%d\b`, id))
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, b := range got {
				if strings.Contains(b, `"send.sent"`) && named.MatchString(b) {
					return true
				}
			}
			return false
		}, 20*time.Second, 20*time.Millisecond, "message %d: its send.sent never reached the endpoint", id)
	}
}
