package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/postgres"
)

// startService runs the real service on 127.0.0.1:0 against databaseURL and returns
// its base URL once /readyz answers 200. Each tweak adjusts the configuration first.
func startService(t *testing.T, databaseURL string, tweaks ...func(*config.Config)) string {
	t.Helper()
	return startServiceLogging(t, databaseURL, testWriter{t}, tweaks...)
}

// startServiceLogging is startService with the service's log written to logs.
func startServiceLogging(t *testing.T, databaseURL string, logs io.Writer, tweaks ...func(*config.Config)) string {
	t.Helper()
	return startServiceWith(t, databaseURL, logs, Options{API: true, Executor: true}, tweaks...)
}

// startServiceWith is startServiceLogging running the parts opts names.
func startServiceWith(t *testing.T, databaseURL string, logs io.Writer, opts Options, tweaks ...func(*config.Config)) string {
	t.Helper()
	cfg := config.Default()
	cfg.DatabaseURL = databaseURL
	cfg.Addr = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	cfg.UnsubscribeSecret = []string{"k1:a-test-secret-0123456789abcdef"}
	for _, tweak := range tweaks {
		tweak(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		opts.OnListen = func(a net.Addr) { addrc <- a }
		done <- run(ctx, cfg, opts, logs, logs)
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a.String()
	case err := <-done:
		t.Fatalf("run returned early: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("service did not listen within 30s")
	}
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond)
	return base
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func get(t *testing.T, url, key string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp, body
}

func TestServeAuthenticatesWithAPIKeys(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	_, key, err := account.NewService(pool).Create(context.Background(), "acme")
	require.NoError(t, err)
	base := startService(t, pool.Config().ConnString())

	resp, body := get(t, base+"/v1/account", key)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "acme", body["name"])

	// The last character changed: to "a", or to "b" when it already is "a".
	last := "a"
	if strings.HasSuffix(key, "a") {
		last = "b"
	}
	for _, k := range []string{"", "so_wrong", key + "x", "so_" + key[3:len(key)-1] + last} {
		resp, body = get(t, base+"/v1/account", k)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "key %q", k)
		require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
		require.NotEmpty(t, body["request_id"])
	}

	resp, _ = get(t, base+"/healthz", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = get(t, base+"/metrics", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = get(t, base+"/openapi.yaml", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestReadyzIsUnavailableWithPendingMigrations(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	base := startService(t, pool.Config().ConnString())
	_, err := pool.Exec(context.Background(), "DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)")
	require.NoError(t, err)
	resp, body := get(t, base+"/readyz", "")
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Contains(t, body["detail"], "migrations are pending")
}

// Replicas that start at the same moment on an empty database all come up; the
// advisory lock makes the migrations run once.
func TestConcurrentMigrationsRunOnce(t *testing.T) {
	t.Parallel()
	url := dbtest.ServerURL(t)
	ctx := context.Background()
	admin, err := postgres.Open(ctx, url, 2)
	require.NoError(t, err)
	// A name of its own, dropped before the admin pool closes (a deferred Close ran
	// before the cleanup, so the drop failed and the next run on a shared server found
	// the database there): runs on one server never meet.
	name := fmt.Sprintf("concurrent_migrations_%d_%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close()
	})
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	dbURL := replaceDatabase(t, url, name)

	var wg sync.WaitGroup
	applied := make([]int, 4)
	errs := make([]error, 4)
	for i := range applied {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool, err := postgres.Open(ctx, dbURL, 2)
			if err != nil {
				errs[i] = err
				return
			}
			defer pool.Close()
			applied[i], errs[i] = postgres.Migrate(ctx, pool)
		}()
	}
	wg.Wait()
	total := 0
	for i := range applied {
		require.NoError(t, errs[i])
		total += applied[i]
	}
	pool, err := postgres.Open(ctx, dbURL, 2)
	require.NoError(t, err)
	defer pool.Close()
	var versions int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM goose_db_version WHERE version_id > 0").Scan(&versions))
	require.Equal(t, versions, total, "each migration applied exactly once across the replicas")
}

func replaceDatabase(t *testing.T, url, name string) string {
	t.Helper()
	u, err := neturl.Parse(url)
	require.NoError(t, err)
	u.Path = "/" + name
	return u.String()
}
