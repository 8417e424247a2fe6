package provider_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/provider"
)

func TestNewChoosesByName(t *testing.T) {
	t.Parallel()
	cfg := config.Default().Providers

	var buf bytes.Buffer
	p, err := provider.New(cfg, slog.New(slog.NewTextHandler(&buf, nil)))
	require.NoError(t, err)
	require.IsType(t, &provider.Log{}, p)
	id, err := p.Send(context.Background(), testMessage("campaign:1:2"))
	require.NoError(t, err)
	require.Equal(t, "campaign:1:2", id)
	require.Contains(t, buf.String(), `headers.List-Unsubscribe-Post="List-Unsubscribe=One-Click"`)
	require.True(t, p.Idempotent())

	cfg.Provider = "smtp"
	p, err = provider.New(cfg, nil)
	require.NoError(t, err)
	require.IsType(t, &provider.SMTP{}, p)
	require.NoError(t, p.Close())

	cfg.Provider = "http"
	_, err = provider.New(cfg, nil)
	require.Error(t, err, "http needs a URL")
	cfg.HTTPProviderURL = "http://127.0.0.1:1/send"
	p, err = provider.New(cfg, nil)
	require.NoError(t, err)
	require.IsType(t, &provider.HTTP{}, p)

	cfg.SMTPSecurity = "ssl3"
	cfg.Provider = "smtp"
	_, err = provider.New(cfg, nil)
	require.Error(t, err)
	cfg.Provider = "pigeon"
	_, err = provider.New(cfg, nil)
	require.Error(t, err)
}
