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
