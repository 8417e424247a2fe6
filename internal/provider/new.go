package provider

import (
	"fmt"
	"log/slog"

	"github.com/sendonce/sendonce/internal/config"
)

// New returns the provider named by cfg.Provider ("log", "smtp" or "http"), built
// from that section's settings. l is used by the log provider.
func New(cfg config.Providers, l *slog.Logger) (Provider, error) {
	switch cfg.Provider {
	case "log", "":
		return NewLog(l), nil
	case "smtp":
		return NewSMTP(SMTPSettings{
			Host:     cfg.SMTPHost,
			Port:     cfg.SMTPPort,
			Username: cfg.SMTPUsername,
			Password: cfg.SMTPPassword,
			Security: cfg.SMTPSecurity,
			Conns:    cfg.SMTPConns,
			Timeout:  cfg.SMTPTimeout,
			Logger:   l,
		})
	case "http":
		return NewHTTP(HTTPSettings{
			URL:           cfg.HTTPProviderURL,
			Authorization: cfg.HTTPProviderAuth,
			Timeout:       cfg.HTTPProviderTimeout,
		})
	}
	return nil, fmt.Errorf("provider %q: must be log, smtp or http", cfg.Provider)
}
