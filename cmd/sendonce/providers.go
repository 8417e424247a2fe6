package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"strings"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/provider"
)

// newProvider builds the provider SENDONCE_PROVIDER names.
// Interim: until the provider package's smtp and http implementations land on main,
// only the log provider exists here.
func newProvider(cfg config.Config, log *slog.Logger) (executor.Provider, error) {
	switch cfg.Provider {
	case "log":
		return logProvider{log: log}, nil
	default:
		return nil, fmt.Errorf("provider %q is not available in this build", cfg.Provider)
	}
}

// logProvider writes each message to the log instead of sending it (development).
type logProvider struct{ log *slog.Logger }

func (p logProvider) Send(_ context.Context, m provider.Message) (string, error) {
	p.log.Info("message (log provider)", "job_id", m.JobID, "to", m.To, "subject", m.Subject, "message_id", m.MessageID)
	return "log:" + m.JobID, nil
}

// Idempotent is true: logging a message twice harms no one.
func (logProvider) Idempotent() bool { return true }

// unsubscribeLinks returns the executor's unsubscribe link function.
// Interim: the signed one-click links of internal/unsubscribe are wired in run.go by
// the lead; until then links point at the public URL with the job's coordinates.
func unsubscribeLinks(cfg config.Config) func(accountID, campaignID, subscriberID int64) (string, string) {
	base := strings.TrimRight(cfg.PublicURL, "/")
	return func(accountID, campaignID, subscriberID int64) (string, string) {
		return fmt.Sprintf("%s/u/%d-%d-%d", base, accountID, campaignID, subscriberID), cfg.UnsubscribeMailto
	}
}

// messageIDKey keys Message-ID derivation with the unsubscribe secret, so ids stay
// stable across restarts and replicas and are not guessable from the job id.
func messageIDKey(cfg config.Config) []byte {
	sum := sha256.Sum256([]byte("message-id\x00" + strings.Join(cfg.UnsubscribeSecret, ",")))
	return sum[:]
}
