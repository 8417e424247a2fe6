package main

import (
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sender"
)

// TestServeRefusesAKeyRingThatCannotDecrypt: a malformed SENDONCE_SECRETS_KEY, or one
// missing the key stored credentials were sealed with, stops serve at start with a
// message naming the variable and the senders, instead of failing every send later.
func TestServeRefusesAKeyRingThatCannotDecrypt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.URL(t)
	pool, err := postgres.Open(ctx, url, 2)
	require.NoError(t, err)
	defer pool.Close()
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	good := sender.NewKeyRingEntry("k1")
	ring, err := sender.ParseKeyRing([]string{good})
	require.NoError(t, err)
	sn, err := sender.NewService(pool, ring).Create(ctx, acc.ID, sender.Input{Name: "rs", Type: "resend",
		Credentials: &sender.Credentials{APIKey: "re_0123456789abcdef"}})
	require.NoError(t, err)

	start := func(keys ...string) error {
		cfg := config.Default()
		cfg.DatabaseURL = url
		cfg.Addr = "127.0.0.1:0"
		cfg.UnsubscribeSecret = []string{"k1:a-test-secret-0123456789abcdef"}
		cfg.SecretsKey = keys
		return run(ctx, cfg, Options{API: true, Executor: true}, io.Discard, io.Discard)
	}
	err = start("k1:not-a-key")
	require.ErrorContains(t, err, "SENDONCE_SECRETS_KEY")
	require.ErrorContains(t, err, "32 bytes")
	err = start(sender.NewKeyRingEntry("k2"))
	require.ErrorContains(t, err, "SENDONCE_SECRETS_KEY cannot decrypt the credentials of 1 sender(s) (ids "+strconv.FormatInt(sn.ID, 10)+")")
	err = start(sender.NewKeyRingEntry("k1")) // the same id, other key material
	require.ErrorContains(t, err, "does not decrypt")
	err = start()
	require.ErrorContains(t, err, "SENDONCE_SECRETS_KEY cannot decrypt")
}
