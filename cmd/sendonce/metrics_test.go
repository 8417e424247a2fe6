package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
)

// With SENDONCE_METRICS_ADDR set, /metrics is served on that listener only: the
// API port, which faces clients, answers 404 for it, so the metrics need no
// authentication of their own. Unset, /metrics stays on the API port (see
// TestServeAuthenticatesWithAPIKeys).
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	cfg := config.Default()
	cfg.DatabaseURL = pool.Config().ConnString()
	cfg.Addr = "127.0.0.1:0"
	cfg.MetricsAddr = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	cfg.UnsubscribeSecret = []string{"k1:a-test-secret-0123456789abcdef"}
	ctx, cancel := context.WithCancel(context.Background())
	api, metrics := make(chan net.Addr, 1), make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, cfg, Options{API: true, Executor: true,
			OnListen:        func(a net.Addr) { api <- a },
			OnMetricsListen: func(a net.Addr) { metrics <- a }}, testWriter{t}, testWriter{t})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	var base, mbase string
	for base == "" || mbase == "" {
		select {
		case a := <-api:
			base = "http://" + a.String()
		case a := <-metrics:
			mbase = "http://" + a.String()
		case err := <-done:
			t.Fatalf("run returned early: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("service did not listen within 30s")
		}
	}
	resp, err := http.Get(mbase + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "go_goroutines")
	require.Contains(t, string(body), "sendonce_", "the service's own metrics, on the same registry")

	resp, err = http.Get(base + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "not on the API port")
	resp, err = http.Get(mbase + "/v1/account")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "the metrics listener serves nothing else")
}

// An executor-only process (serve --api=false) has no API listener: with
// SENDONCE_METRICS_ADDR it is probed and scraped there. /healthz answers while the
// process is up, /readyz while the database is reachable and fully migrated (503
// once a migration this binary knows is missing), /metrics carries the executor's
// metrics.
func TestExecutorOnlyProbesOnMetricsAddress(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	cfg := config.Default()
	cfg.DatabaseURL = pool.Config().ConnString()
	cfg.MetricsAddr = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	cfg.UnsubscribeSecret = []string{"k1:a-test-secret-0123456789abcdef"}
	ctx, cancel := context.WithCancel(context.Background())
	metrics := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, cfg, Options{API: false, Executor: true,
			OnMetricsListen: func(a net.Addr) { metrics <- a }}, testWriter{t}, testWriter{t})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	var base string
	select {
	case a := <-metrics:
		base = "http://" + a.String()
	case err := <-done:
		t.Fatalf("run returned early: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the metrics listener did not listen within 30s")
	}
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, _ := get("/healthz")
	require.Equal(t, http.StatusOK, code)
	code, body := get("/readyz")
	require.Equal(t, http.StatusOK, code, body)
	code, body = get("/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "sendonce_claim_seconds", "the executor's metrics")

	// A migration this binary knows goes missing: not ready until it is back.
	ctx2 := context.Background()
	var version int64
	require.NoError(t, pool.QueryRow(ctx2, `DELETE FROM goose_db_version
		WHERE version_id = (SELECT max(version_id) FROM goose_db_version) RETURNING version_id`).Scan(&version))
	code, body = get("/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "migrations are pending")
	_, err := pool.Exec(ctx2, `INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`, version)
	require.NoError(t, err)
	code, _ = get("/readyz")
	require.Equal(t, http.StatusOK, code)
}
