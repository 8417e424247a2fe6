package provider

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"
)

// SMTPSettings configure the SMTP provider.
type SMTPSettings struct {
	Host     string
	Port     int
	Username string // empty: no AUTH
	Password string
	// Security is none, starttls (required, not opportunistic) or tls (implicit TLS).
	Security string
	// Conns is the number of persistent connections, each sending one message at a time.
	Conns int
	// Timeout bounds each SMTP command and the DATA transfer; 0 means 30s.
	Timeout time.Duration
	// TLSConfig overrides the TLS settings (tests with a self-signed server).
	TLSConfig *tls.Config
}

// SMTP sends through an SMTP relay with go-mail over a small pool of persistent
// connections, one recipient per message.
//
// Classification (reply codes per RFC 5321 §4.2.1; the lost-reply gap per RFC 1047):
//
//	connect, EHLO, STARTTLS or AUTH failed                      → Temporary
//	MAIL, RCPT or DATA answered 4xx                             → Temporary
//	MAIL, RCPT or DATA answered 5xx                             → Permanent
//	MAIL, RCPT or DATA without an answer (connection broke)     → Temporary
//	connection lost while writing the message body              → Ambiguous
//	final "." answered 4xx / 5xx                                → Temporary / Permanent
//	final "." without an answer (lost 250, timeout, reset)      → Ambiguous
//
// The last two are the RFC 1047 gap: the relay may have queued the message. SMTP
// has no idempotency key, so Idempotent is false and the executor's
// ambiguous_policy decides.
//
// An in-flight exchange is bounded by Timeout, not by the context: abandoning a
// send mid-DATA would itself create an ambiguous outcome. The context bounds the
// wait for a free connection and the dial.
type SMTP struct {
	client *mail.Client // configuration only; connections live in slots
	slots  chan *smtpSlot
	done   chan struct{}
	once   sync.Once
}

// smtpSlot is one pooled connection; c is nil until dialled or after it broke.
type smtpSlot struct {
	c *smtp.Client
}

// NewSMTP returns an SMTP provider. It does not dial: connections are opened on
// first use and reopened when they break.
func NewSMTP(s SMTPSettings) (*SMTP, error) {
	if s.Conns < 1 {
		s.Conns = 1
	}
	if s.Timeout <= 0 {
		s.Timeout = 30 * time.Second
	}
	opts := []mail.Option{
		mail.WithPort(s.Port),
		mail.WithTimeout(s.Timeout),
		// No NOOP before and no RSET after each message: a stale connection shows up
		// as MAIL FROM failing without an answer, which is retried on a new one.
		mail.WithoutNoop(),
		mail.WithoutRset(),
	}
	switch s.Security {
	case "none":
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	case "starttls", "":
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	case "tls":
		opts = append(opts, mail.WithSSL())
	default:
		return nil, fmt.Errorf("smtp provider: security must be none, starttls or tls, not %q", s.Security)
	}
	if s.TLSConfig != nil {
		opts = append(opts, mail.WithTLSConfig(s.TLSConfig))
	}
	if s.Username != "" {
		// Auto-discovery picks the strongest mechanism offered and refuses to send a
		// plain password over an unencrypted connection.
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover),
			mail.WithUsername(s.Username), mail.WithPassword(s.Password))
	}
	c, err := mail.NewClient(s.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("smtp provider: %w", err)
	}
	p := &SMTP{client: c, slots: make(chan *smtpSlot, s.Conns), done: make(chan struct{})}
	for range s.Conns {
		p.slots <- &smtpSlot{}
	}
	return p, nil
}

// Send delivers m on a pooled connection and returns m.MessageID, the id bounces
// and complaints refer to (the job id when m has none).
func (p *SMTP) Send(ctx context.Context, m Message) (string, error) {
	msg, err := MIME(m)
	if err != nil {
		return "", classed(Permanent, 0, err)
	}
	var sl *smtpSlot
	select {
	case sl = <-p.slots:
	case <-p.done:
		return "", classed(Temporary, 0, errClosed)
	case <-ctx.Done():
		return "", classed(Temporary, 0, ctx.Err())
	}
	defer func() { p.slots <- sl }()

	for attempt := 0; ; attempt++ {
		reused := sl.c != nil
		if !reused {
			c, err := p.client.DialToSMTPClientWithContext(ctx)
			if err != nil {
				return "", classed(Temporary, 0, fmt.Errorf("smtp connect: %w", err))
			}
			sl.c = c
		}
		err := p.client.SendWithSMTPClient(sl.c, msg)
		if err == nil {
			if m.MessageID == "" {
				return m.JobID, nil
			}
			return m.MessageID, nil
		}
		class, code, keep := classifySMTP(err)
		if !keep {
			p.drop(sl)
		}
		// A pooled connection the server closed while idle fails before the relay
		// saw a transaction: try once more on a fresh one.
		if reused && attempt == 0 && class == Temporary && code == 0 && !keep {
			continue
		}
		return "", classed(class, code, err)
	}
}

// classifySMTP returns the class of a go-mail send error, the SMTP reply code
// (0 if the server did not answer) and whether the connection is still usable.
func classifySMTP(err error) (Class, int, bool) {
	var se *mail.SendError
	if !errors.As(err, &se) {
		return Ambiguous, 0, false
	}
	code := se.ErrorCode()
	replied := code >= 400 && code < 600
	// 421: the server is closing the connection even though it answered.
	keep := replied && code != 421
	byCode := func(noReply Class) Class {
		switch {
		case code >= 500 && code < 600:
			return Permanent
		case code >= 400:
			return Temporary
		}
		return noReply
	}
	switch se.Reason {
	case mail.ErrGetSender, mail.ErrGetRcpts, mail.ErrNoUnencoded:
		return Permanent, 0, true
	case mail.ErrConnCheck:
		return Temporary, 0, false
	case mail.ErrSMTPMailFrom, mail.ErrSMTPRcptTo, mail.ErrSMTPData:
		return byCode(Temporary), code, keep
	case mail.ErrSMTPDataClose:
		return byCode(Ambiguous), code, keep
	case mail.ErrWriteContent:
		return Ambiguous, 0, false
	}
	return Ambiguous, code, false
}

// drop closes a slot's broken connection without QUIT, which could only hang.
func (p *SMTP) drop(sl *smtpSlot) {
	if sl.c != nil {
		sl.c.Close() //nolint:errcheck // the connection is already broken
		sl.c = nil
	}
}

// Idempotent is false: SMTP has no way to ask "did you already take this one?".
func (p *SMTP) Idempotent() bool { return false }

// Close waits for in-flight sends, then says QUIT on every open connection.
// Later calls do nothing.
func (p *SMTP) Close() error {
	var errs []error
	p.once.Do(func() {
		close(p.done)
		for range cap(p.slots) {
			sl := <-p.slots
			if sl.c != nil {
				errs = append(errs, p.client.CloseWithSMTPClient(sl.c))
				sl.c = nil
			}
		}
	})
	return errors.Join(errs...)
}
