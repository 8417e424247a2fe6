package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/token"
)

// TestServeRefusesWithoutUnsubscribeSecret: with SENDONCE_UNSUBSCRIBE_SECRET empty,
// links would be signed with a key anyone can know, so neither the API nor an
// executor-only process starts. The check comes before
// the database, so no database is needed.
func TestServeRefusesWithoutUnsubscribeSecret(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{{API: true, Executor: true}, {API: true}, {Executor: true}} {
		cfg := config.Default()
		cfg.DatabaseURL = "postgres://127.0.0.1:1/none?connect_timeout=1"
		cfg.Addr = "127.0.0.1:0"
		err := run(context.Background(), cfg, opts, io.Discard, io.Discard)
		require.Error(t, err, "%+v", opts)
		require.Contains(t, err.Error(), "SENDONCE_UNSUBSCRIBE_SECRET")
		require.Contains(t, err.Error(), "keyid:secret")
	}
	_, err := token.NewRing(nil)
	require.Error(t, err, "no key, no signer")
}

// TestDevUnsubscribeSecret: `sendonce dev` makes a random secret on its first run,
// keeps it private in the data folder and reuses it, so links stay valid across runs.
func TestDevUnsubscribeSecret(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "unsubscribe_secret")
	first, err := devUnsubscribeSecret(path)
	require.NoError(t, err)
	_, err = token.NewRing([]string{first})
	require.NoError(t, err, "a valid keyid:secret pair")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	again, err := devUnsubscribeSecret(path)
	require.NoError(t, err)
	require.Equal(t, first, again)

	other, err := devUnsubscribeSecret(filepath.Join(t.TempDir(), "unsubscribe_secret"))
	require.NoError(t, err)
	require.NotEqual(t, first, other, "random per data folder")
}
