package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/pgbouncer"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sink"
)

// startBouncer puts a real PgBouncer in transaction pooling in front of the test
// database at directURL and returns the pooled URL. Without the binary the test is
// skipped on a developer's machine and fails under CI.
func startBouncer(t *testing.T, directURL string) string {
	t.Helper()
	if _, err := pgbouncer.Binary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs pgbouncer: %v", err)
		}
		t.Skipf("%v", err)
	}
	u, err := neturl.Parse(directURL)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := pgbouncer.Start(ctx, pgbouncer.Options{Upstream: u.Host, User: u.User.Username(), PoolSize: 5})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Stop() })
	return b.URL(strings.TrimPrefix(u.Path, "/"))
}

// TestServeThroughPgBouncerTransactionPooling runs the whole service on a URL that
// goes through PgBouncer 1.18 in transaction pooling, which keeps no session and no
// prepared statement between transactions: SENDONCE_DATABASE_EXEC_MODE=exec for the
// pools, SENDONCE_DIRECT_DATABASE_URL for the migrations' session lock and the
// executor's LISTEN. The API's smoke path (create subscribers, list them, create and
// approve a campaign) must work, and the campaign must reach sent with every
// recipient once at the deduplicating sink. With the default cache_statement mode
// the same run fails on "prepared statement ... does not exist" (pgx caches
// statements on a server connection the next transaction no longer has).
func TestServeThroughPgBouncerTransactionPooling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	direct := dbtest.URL(t)
	pooled := startBouncer(t, direct)
	// The direct connections carry a name, so the test can see which side the LISTEN is on.
	directNamed := direct + "&application_name=sendonce-direct"
	if !strings.Contains(direct, "?") {
		directNamed = direct + "?application_name=sendonce-direct"
	}
	admin, err := postgres.Open(ctx, direct, 2)
	require.NoError(t, err)
	t.Cleanup(admin.Close)

	s := sink.NewHTTP(sink.HTTPOptions{KeepDeliveries: true})
	sinkURL, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })

	cfg := config.Default()
	cfg.DatabaseURL = pooled
	cfg.DirectDatabaseURL = directNamed
	cfg.DatabaseExecMode = "exec"
	cfg.APIRatePerSecond = 0 // the smoke path makes its calls back to back
	cfg.Addr = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	cfg.Provider = "http"
	cfg.HTTPProviderURL = sinkURL + "/send"
	cfg.UnsubscribeSecret = []string{"k1:a-test-secret-0123456789abcdef"}
	require.NoError(t, cfg.Validate())

	// The account is created the way `sendonce account create` does it: through the pooled URL.
	key := createAccountThrough(t, cfg, "acme")

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
	// The LISTEN is held on the direct URL (a transaction pooler would drop it).
	require.Eventually(t, func() bool {
		var n int
		_ = admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND query LIKE 'LISTEN%' AND application_name = 'sendonce-direct'`).Scan(&n)
		return n == 1
	}, 30*time.Second, 10*time.Millisecond)

	call := func(method, path string, body any) (int, map[string]any) {
		var rd *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.Less(t, resp.StatusCode, 300, "%s %s: %v", method, path, out)
		return resp.StatusCode, out
	}
	_, list := call(http.MethodPost, "/v1/lists", map[string]any{"name": "newsletter"})
	listID := list["id"]
	const n = 120
	var ids []any
	for i := range n {
		_, sub := call(http.MethodPost, "/v1/subscribers", map[string]any{"email": fmt.Sprintf("r%d@example.com", i),
			"name": fmt.Sprintf("R%d", i), "status": "confirmed"})
		ids = append(ids, sub["id"])
	}
	call(http.MethodPost, fmt.Sprintf("/v1/lists/%v/members", listID), map[string]any{"subscriber_ids": ids})
	_, page := call(http.MethodGet, fmt.Sprintf("/v1/subscribers?list_id=%v&limit=500", listID), nil)
	require.Len(t, page["data"], n)
	_, c := call(http.MethodPost, "/v1/campaigns", map[string]any{"name": "launch", "subject": "Hi {{.Name}}",
		"from_email": "news@example.com", "list_ids": []any{listID},
		"text_template": "Hello {{.Name}}, bye: {{.UnsubscribeURL}}"})
	id := int64(c["id"].(float64))
	call(http.MethodPost, fmt.Sprintf("/v1/campaigns/%d/approve", id), map[string]any{})
	// SENDONCE_TICK is 60s: only the NOTIFY, heard on the direct LISTEN, starts it this soon.
	require.Eventually(t, func() bool {
		_, got := call(http.MethodGet, fmt.Sprintf("/v1/campaigns/%d", id), nil)
		return got["status"] == "sent"
	}, 30*time.Second, 20*time.Millisecond)

	st := s.Stats()
	require.Equal(t, int64(n), st.Unique)
	require.Zero(t, st.Duplicates)
	delivered := map[string]int{}
	for k := range s.Deliveries() {
		delivered[k] = 1
	}
	invariant.Require(t, admin, invariant.Options{Delivered: delivered, Recipients: map[int64]int64{id: n}})
}

// createAccountThrough creates an account on cfg's pooled URL and returns its API key.
func createAccountThrough(t *testing.T, cfg config.Config, name string) string {
	t.Helper()
	ctx := context.Background()
	pool, _, err := openMigrated(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	_, key, err := account.NewService(pool).Create(ctx, name)
	require.NoError(t, err)
	return key
}
