package provider

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Log is the development provider: it writes each message to the log instead of
// sending it. It never fails, and a repeat is harmless, so it counts as idempotent.
// With an inbox (KeepLast) it also keeps the last messages, so a developer can read
// and follow what would have been sent: a confirmation link, an unsubscribe link.
type Log struct {
	log *slog.Logger

	mu    sync.Mutex
	inbox *Inbox
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
	p.mu.Lock()
	inbox := p.inbox
	p.mu.Unlock()
	if inbox != nil {
		inbox.add(m)
	}
	return m.JobID, nil
}

// Idempotent is true: logging twice delivers nothing twice.
func (p *Log) Idempotent() bool { return IdempotentKind("log") }

// Close does nothing.
func (p *Log) Close() error { return nil }

// KeepLast makes the provider keep the last n messages it logs (in memory, for
// development only) and returns that inbox; called again, it returns the same one.
func (p *Log) KeepLast(n int) *Inbox {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inbox == nil {
		p.inbox = &Inbox{max: n, Now: time.Now}
	}
	return p.inbox
}

// maxKeptPart bounds each kept part of a message, so the inbox's memory is bounded
// by its count whatever the templates render.
const maxKeptPart = 256 << 10

// Inbox is the bounded memory of a Log provider: the last messages it logged.
type Inbox struct {
	// Now stamps the messages; tests may set it before use.
	Now func() time.Time

	mu   sync.Mutex
	max  int
	last int64
	msgs []Logged // oldest first, at most max
}

// Logged is a message the Log provider logged, numbered in order from 1.
type Logged struct {
	ID       int64
	LoggedAt time.Time
	Message
}

func (b *Inbox) add(m Message) {
	// Its own copy: m's parts may be the sender's buffer, reused once Send returns.
	m.HTML, m.Text = strings.Clone(truncate(m.HTML)), strings.Clone(truncate(m.Text))
	m.Headers = append([]Header(nil), m.Headers...)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last++
	b.msgs = append(b.msgs, Logged{ID: b.last, LoggedAt: b.Now().UTC(), Message: m})
	if len(b.msgs) > b.max {
		b.msgs = append(b.msgs[:0], b.msgs[len(b.msgs)-b.max:]...)
	}
}

func truncate(s string) string {
	if len(s) > maxKeptPart {
		return s[:maxKeptPart]
	}
	return s
}

// List returns the kept messages that keep accepts, newest first.
func (b *Inbox) List(keep func(Logged) bool) []Logged {
	b.mu.Lock()
	all := append([]Logged(nil), b.msgs...)
	b.mu.Unlock()
	out := make([]Logged, 0, len(all))
	for i := len(all) - 1; i >= 0; i-- {
		if keep(all[i]) {
			out = append(out, all[i])
		}
	}
	return out
}

// Get returns the kept message with that id, if it is still kept.
func (b *Inbox) Get(id int64) (Logged, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.msgs {
		if m.ID == id {
			return m, true
		}
	}
	return Logged{}, false
}

// Forget drops the kept messages to, or copying, the address (lower case), as an
// erasure of the person asks, and returns how many went.
func (b *Inbox) Forget(emailLower string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	kept := b.msgs[:0]
	n := 0
	for _, m := range b.msgs {
		if strings.EqualFold(m.To, emailLower) || slices.ContainsFunc(append(append([]string{}, m.Cc...), m.Bcc...),
			func(a string) bool { return strings.EqualFold(a, emailLower) }) {
			n++
			continue
		}
		kept = append(kept, m)
	}
	clear(b.msgs[len(kept):])
	b.msgs = kept
	return n
}
