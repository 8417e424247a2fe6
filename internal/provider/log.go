package provider

import (
	"context"
	"log/slog"
)

// Log is the development provider: it writes each message to the log instead of
// sending it. It never fails, and a repeat is harmless, so it counts as idempotent.
type Log struct {
	log *slog.Logger
}

// NewLog returns a provider that logs to l (slog.Default() when nil).
func NewLog(l *slog.Logger) *Log {
	if l == nil {
		l = slog.Default()
	}
	return &Log{log: l}
}

// Send logs the message, at debug level (a campaign logs a line per recipient here,
// which at info would bury the service's own lines), and returns its job id as the
// provider id.
func (p *Log) Send(ctx context.Context, m Message) (string, error) {
	attrs := []slog.Attr{
		slog.String("job_id", m.JobID),
		slog.String("message_id", m.MessageID),
		slog.String("from", m.From),
		slog.String("to", m.To),
		slog.String("subject", m.Subject),
		slog.Int("html_bytes", len(m.HTML)),
		slog.Int("text_bytes", len(m.Text)),
	}
	headers := make([]any, 0, len(m.Headers))
	for _, h := range m.Headers {
		headers = append(headers, slog.String(h.Name, h.Value))
	}
	attrs = append(attrs, slog.Group("headers", headers...))
	p.log.LogAttrs(ctx, slog.LevelDebug, "message sent (log provider)", attrs...)
	return m.JobID, nil
}

// Idempotent is true: logging twice delivers nothing twice.
func (p *Log) Idempotent() bool { return IdempotentKind("log") }

// Close does nothing.
func (p *Log) Close() error { return nil }
