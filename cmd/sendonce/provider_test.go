package main

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/token"
)

func TestNewProviderChoosesByName(t *testing.T) {
	t.Parallel()
	cfg := config.Default().Providers

	var buf bytes.Buffer
	p, err := newProvider(cfg, slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))) // it logs each message at debug
	require.NoError(t, err)
	require.IsType(t, &provider.Log{}, p)
	m := provider.Message{JobID: "campaign:1:2", From: "a@example.com", To: "b@example.com",
		Headers: []provider.Header{{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"}}}
	id, err := p.Send(context.Background(), m)
	require.NoError(t, err)
	require.Equal(t, "campaign:1:2", id)
	require.Contains(t, buf.String(), `headers.List-Unsubscribe-Post="List-Unsubscribe=One-Click"`)
	require.True(t, p.Idempotent())

	cfg.Provider = "smtp"
	p, err = newProvider(cfg, nil)
	require.NoError(t, err)
	require.IsType(t, &provider.SMTP{}, p)
	require.NoError(t, p.Close())

	cfg.Provider = "http"
	_, err = newProvider(cfg, nil)
	require.Error(t, err, "http needs a URL")
	cfg.HTTPProviderURL = "http://127.0.0.1:1/send"
	p, err = newProvider(cfg, nil)
	require.NoError(t, err)
	require.IsType(t, &provider.HTTP{}, p)

	cfg.SMTPSecurity = "ssl3"
	cfg.Provider = "smtp"
	_, err = newProvider(cfg, nil)
	require.Error(t, err)
	cfg.Provider = "pigeon"
	_, err = newProvider(cfg, nil)
	require.Error(t, err)
}

func TestMessageBuilderKey(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.UnsubscribeSecret = []string{"k1:first-secret-0123456789"}
	keys, err := token.NewRing(cfg.UnsubscribeSecret)
	require.NoError(t, err)
	derived, err := messageBuilder(cfg, keys)
	require.NoError(t, err)
	again, err := messageBuilder(cfg, keys)
	require.NoError(t, err)
	id := derived.MessageID("campaign:1:2", "a@example.com")
	require.Equal(t, id, again.MessageID("campaign:1:2", "a@example.com"), "derived keys agree across processes")

	cfg.MessageIDKey = "an-explicit-key-0123456789"
	explicit, err := messageBuilder(cfg, keys)
	require.NoError(t, err)
	require.NotEqual(t, id, explicit.MessageID("campaign:1:2", "a@example.com"))

	cfg.MessageIDKey = "short"
	_, err = messageBuilder(cfg, keys)
	require.ErrorContains(t, err, "SENDONCE_MESSAGE_ID_KEY")
}
