package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/postgres"
)

// TestListenerReconnects: a Listener hands each notification of its channel to the
// channel's handler; when its connection is killed it reconnects, tells the
// handler so (what was notified meanwhile is lost), and hears again.
func TestListenerReconnects(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	l := postgres.NewListener(pool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	got, connected := make(chan string, 10), make(chan struct{}, 10)
	l.Handle("listen_test", func(p string) { got <- p }, func() { connected <- struct{}{} })
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-connected
	require.Panics(t, func() { l.Handle("late", nil, nil) }, "a channel is handled before Run")

	notify := func(payload string) string {
		_, err := pool.Exec(ctx, "SELECT pg_notify('listen_test', $1)", payload)
		require.NoError(t, err)
		select {
		case p := <-got:
			return p
		case <-time.After(30 * time.Second):
			t.Fatal("no notification within 30s")
			return ""
		}
	}
	require.Equal(t, "a", notify("a"))

	var killed int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`).Scan(&killed))
	require.Equal(t, 1, killed)
	select {
	case <-connected:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not reconnect within 30s")
	}
	require.Equal(t, "b", notify("b"))
}
