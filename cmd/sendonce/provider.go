package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/token"
)

// newProvider returns the provider named by cfg.Provider ("log", "smtp" or "http"),
// built from that section's settings. run builds one per process and hands it to
// the executor and to the API's test sends; l is used by the log provider.
func newProvider(cfg config.Providers, l *slog.Logger) (provider.Provider, error) {
	switch cfg.Provider {
	case "log", "":
		return provider.NewLog(l), nil
	case "smtp":
		return provider.NewSMTP(provider.SMTPSettings{
			Host:       cfg.SMTPHost,
			Port:       cfg.SMTPPort,
			Username:   cfg.SMTPUsername,
			Password:   cfg.SMTPPassword,
			Security:   cfg.SMTPSecurity,
			Conns:      cfg.SMTPConns,
			Timeout:    cfg.SMTPTimeout,
			Logger:     l,
			NoChunking: !cfg.SMTPChunking,
		})
	case "http":
		return provider.NewHTTP(provider.HTTPSettings{
			URL:           cfg.HTTPProviderURL,
			Authorization: cfg.HTTPProviderAuth,
			Timeout:       cfg.HTTPProviderTimeout,
		})
	}
	return nil, fmt.Errorf("provider %q: must be log, smtp or http", cfg.Provider)
}

// closeProvider closes p within ctx when it can bound its own shutdown (SMTP says
// QUIT on its pooled connections, all at once, and gives up at the deadline).
func closeProvider(ctx context.Context, p provider.Provider) error {
	if s, ok := p.(interface{ Shutdown(context.Context) error }); ok {
		return s.Shutdown(ctx)
	}
	return p.Close()
}

// messageIDPurpose separates the Message-ID key derived from the unsubscribe secret
// from every other use of that secret.
const messageIDPurpose = "sendonce.message-id.v1"

// messageBuilder returns the builder of every message this process sends, keyed
// with SENDONCE_MESSAGE_ID_KEY, or, when that is unset, with a key derived from the
// signing unsubscribe secret (HMAC-SHA256(secret, "sendonce.message-id.v1")), so
// Message-IDs are keyed in every deployment without a second secret to manage.
func messageBuilder(cfg config.Config, keys *token.Ring) (*render.Builder, error) {
	if cfg.MessageIDKey != "" {
		b, err := render.NewBuilder([]byte(cfg.MessageIDKey))
		if err != nil {
			return nil, fmt.Errorf("configuration: SENDONCE_MESSAGE_ID_KEY: %w", err)
		}
		return b, nil
	}
	return render.NewBuilder(keys.DeriveKey(messageIDPurpose))
}

// executorSenders gives the executor the providers of the accounts' senders.
type executorSenders struct{ r *sender.Router }

// Route builds (or reuses) the sender's provider.
func (s executorSenders) Route(ctx context.Context, accountID, senderID int64) (executor.Route, error) {
	p, rate, kind, err := s.r.Route(ctx, accountID, senderID)
	if err != nil {
		return executor.Route{}, err
	}
	limits, warm := s.r.Pacing(senderID)
	return executor.Route{Provider: p, RatePerSecond: rate, Kind: kind, DomainLimits: limits, Warmup: warm}, nil
}

// Report keeps the sender's health.
func (s executorSenders) Report(ctx context.Context, accountID, senderID int64, email string, err error) {
	s.r.Report(ctx, accountID, senderID, email, err)
}

// Pool reads a sender pool's members for the executor's route choice.
func (s executorSenders) Pool(ctx context.Context, accountID, poolID int64) ([]executor.PoolMember, error) {
	ms, err := s.r.Pool(ctx, accountID, poolID)
	if err != nil {
		return nil, err
	}
	out := make([]executor.PoolMember, 0, len(ms))
	for _, m := range ms {
		out = append(out, executor.PoolMember{SenderID: m.SenderID, Held: m.Held})
	}
	return out, nil
}
