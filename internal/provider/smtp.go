package provider

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/textproto"
	"sync"
	"time"

	"github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/sendonce/sendonce/internal/egress"
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
	// NoChunking keeps every message on the two-step path (DATA) even when the
	// relay offers CHUNKING (SENDONCE_SMTP_CHUNKING=false).
	NoChunking bool
	// TLSConfig overrides the TLS settings (tests with a self-signed server).
	TLSConfig *tls.Config
	// Logger receives what is worth knowing but not an error (a pooled connection
	// the relay had closed, found at shutdown); nil discards it.
	Logger *slog.Logger
	// Guard says where connections may go (checked on the address dialled, after
	// DNS). A sender (aimed by a tenant) always sets it; nil is for the operator's
	// own relay and tests: any address.
	Guard *egress.Guard
	// Signer, when set, adds a DKIM signature to each message as it is sent (the
	// account's active key of the From domain, if it has one).
	Signer Signer
}

// Signer signs a message's final bytes: the DKIM-Signature header field (name,
// value, CRLF) to put on top of msg, or nil to send it unsigned. It is called on
// the bytes about to be sent, so a message sent again (a retry, even with the
// same Message-ID) is signed again over its new Date and boundary.
type Signer interface {
	Signature(ctx context.Context, from string, msg []byte) ([]byte, error)
}

// ErrSigningKey wraps a Signer's error when the key itself cannot be used (it
// does not decrypt or parse), as opposed to a lookup that failed.
var ErrSigningKey = errors.New("the signing key cannot be used")

// SMTP sends through an SMTP relay over a small pool of persistent connections,
// one recipient per message. go-mail opens each connection (TLS, EHLO, STARTTLS,
// AUTH) and closes it (QUIT); the transaction itself (smtptx.go) writes the
// commands and the message, assembled once into a reused buffer (mime.go),
// straight onto the connection, with MAIL FROM, RCPT TO and DATA in one write
// when the relay offers PIPELINING — and, when it offers CHUNKING as well, a
// single-recipient message on a connection in use goes with its envelope in one
// write as a BDAT LAST chunk (RFC 3030): one round trip per message instead of
// two (transactChunked says where its classification differs: a chunk that was
// written and got no answer is Ambiguous).
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
// With PIPELINING the three replies are read in order and the first refusal
// classifies, as it would have one command at a time; a DATA the relay accepted
// after a refusal gets a lone "." (RFC 2920 §3.1), which cannot deliver anything
// for lack of a recipient. After a refusal the connection is reset (RSET) and kept.
//
// Each transaction is bounded by Timeout, and the whole exchange by the context: when
// it ends (the shutdown deadline, the lease) the connection is cut and the send is
// classified by how far it got, as above: before the body, Temporary (the relay
// has nothing); during or after it, Ambiguous.
//
// A reused connection the relay closed while it sat idle (no answer, or 421 as in
// "421 4.4.2 Idle timeout") fails before any of the message was accepted: the
// message is sent again on a fresh connection, once, and nothing is charged.
type SMTP struct {
	settings SMTPSettings
	client   *mail.Client // configuration only; connections live in slots
	slots    chan *smtpSlot
	done     chan struct{}
	once     sync.Once
	log      *slog.Logger
	// timeout is Timeout, which also bounds each QUIT at Close.
	timeout time.Duration
}

// smtpSlot is one pooled connection; c is nil until dialled or after it broke.
// raw is the connection's socket, which a cut closes under a transaction waiting
// for a reply (or under go-mail's QUIT at shutdown).
type smtpSlot struct {
	c   *smtp.Client
	raw net.Conn
	// pipelining is whether the relay offered PIPELINING (RFC 2920); mailParams
	// are the MAIL FROM parameters its extensions call for.
	pipelining bool
	mailParams string
	// chunking is whether the relay offered CHUNKING (RFC 3030) as well as
	// PIPELINING: a single-recipient message then goes as MAIL, RCPT and one
	// BDAT LAST chunk in a single write (see transactChunked).
	chunking bool
	// answered is when the relay last answered on this connection (the dial's
	// replies, or a transaction's last reply).
	answered time.Time
}

// slotKey carries the slot being dialled into the dial function.
type slotKey struct{}

// NewSMTP returns an SMTP provider. It does not dial: connections are opened on
// first use and reopened when they break.
func NewSMTP(s SMTPSettings) (*SMTP, error) {
	if s.Conns < 1 {
		s.Conns = 1
	}
	if s.Timeout <= 0 {
		s.Timeout = 30 * time.Second
	}
	tlsConfig := s.TLSConfig
	if tlsConfig == nil {
		tlsConfig = &tls.Config{ServerName: s.Host, MinVersion: tls.VersionTLS12}
	}
	implicitTLS := false
	opts := []mail.Option{
		mail.WithPort(s.Port),
		mail.WithTimeout(s.Timeout),
		// go-mail only dials and says QUIT; the transaction (smtptx.go) sends no
		// NOOP before and no RSET after a message: a stale connection shows up as
		// MAIL FROM failing without an answer, which is retried on a new one.
		mail.WithoutNoop(),
		mail.WithoutRset(),
		mail.WithTLSConfig(tlsConfig),
	}
	switch s.Security {
	case "none":
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	case "starttls", "":
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	case "tls":
		// The dial function speaks TLS from the first byte; go-mail sees a TLS
		// connection (so AUTH may use PLAIN) and, with no STARTTLS offered over
		// TLS, does nothing more.
		implicitTLS = true
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	default:
		return nil, fmt.Errorf("smtp provider: security must be none, starttls or tls, not %q", s.Security)
	}
	// Our own dial keeps each connection's socket, so a cut can close it.
	dialer := guardOf(s.Guard).Dialer(s.Timeout)
	opts = append(opts, mail.WithDialContextFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if sl, ok := ctx.Value(slotKey{}).(*smtpSlot); ok {
			sl.raw = raw
		}
		if !implicitTLS {
			return raw, nil
		}
		tc := tls.Client(raw, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close() //nolint:errcheck // the handshake error is the one to report
			return nil, err
		}
		return tc, nil
	}))
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
	l := s.Logger
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	p := &SMTP{settings: s, client: c, slots: make(chan *smtpSlot, s.Conns), done: make(chan struct{}), log: l, timeout: s.Timeout}
	for range s.Conns {
		p.slots <- &smtpSlot{}
	}
	return p, nil
}

// Send delivers m on a pooled connection and returns m.MessageID, the id bounces
// and complaints refer to (the job id when m has none).
func (p *SMTP) Send(ctx context.Context, m Message) (string, error) {
	buf := mimeBufs.Get().(*[]byte)
	defer putMIMEBuf(buf)
	msg, err := AppendMIME((*buf)[:0], m)
	if err != nil {
		return "", classed(Permanent, 0, err)
	}
	if !bytes.HasSuffix(msg, []byte("\r\n")) {
		msg = append(msg, '\r', '\n') // its last line ended, as the end-of-data mark would
	}
	if p.settings.Signer != nil {
		sig, err := p.settings.Signer.Signature(ctx, m.From, msg)
		if err != nil {
			// Nothing was handed over. A key that cannot be used (SENDONCE_SECRETS_KEY
			// lacks its entry) is the sender's setup: a run of these pauses the
			// sender, as an auth failure does; a database that did not answer is not.
			return "", &Error{Class: Temporary, Err: fmt.Errorf("dkim: %w", err), Config: errors.Is(err, ErrSigningKey)}
		}
		msg = prepend(msg, sig)
	}
	*buf = msg
	// The message goes as it is in a BDAT chunk, or dot-stuffed with the
	// end-of-data mark after DATA; stuffing is in place, so once a transaction
	// needed it the message stays in that form.
	stuffed := false
	rcpts := envelopeRecipients(m)
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
			if err := p.dial(ctx, sl); err != nil {
				if egress.Refused(err) {
					return "", refusedError()
				}
				return "", dialError(err)
			}
		}
		raw := sl.raw
		chunked := !stuffed && sl.chunkable(len(rcpts))
		if !chunked && !stuffed {
			msg = appendEndOfData(dotStuff(msg))
			*buf = msg
			stuffed = true
		}
		cut := context.AfterFunc(ctx, func() { raw.Close() }) //nolint:errcheck // cutting on purpose
		var f *smtpFailure
		if chunked {
			f = p.transactChunked(sl, envelopeFrom(m), rcpts[0], msg)
		} else {
			f = p.transact(sl, envelopeFrom(m), rcpts, msg)
		}
		cutHappened := !cut()
		if f == nil || !f.broken {
			sl.answered = time.Now()
		}
		if f == nil {
			if cutHappened {
				// Accepted just as the cut came: the message is sent, the connection is not reusable.
				p.drop(sl)
			}
			if m.MessageID == "" {
				return m.JobID, nil
			}
			return m.MessageID, nil
		}
		if f.broken || cutHappened {
			p.drop(sl)
		}
		if reused && attempt == 0 && !cutHappened && f.stale() {
			continue
		}
		var err error = f
		if cutHappened {
			err = fmt.Errorf("%w (cut: %w)", err, context.Cause(ctx))
		}
		e := classed(f.class(), f.code, err)
		e.RouteDown = f.routeDown()
		return "", e
	}
}

// envelopeFrom is m's MAIL FROM address: its Return-Path when set, else From.
func envelopeFrom(m Message) string {
	if m.ReturnPath != "" {
		return m.ReturnPath
	}
	return m.From
}

// prepend puts head before msg, in msg's buffer when it has room.
func prepend(msg, head []byte) []byte {
	if len(head) == 0 {
		return msg
	}
	n := len(msg)
	msg = append(msg, head...)
	copy(msg[len(head):], msg[:n])
	copy(msg, head)
	return msg
}

// mimeBufs holds message buffers between sends: a message is assembled into one,
// sent from it, and the buffer reused.
var mimeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// putMIMEBuf returns a buffer to the pool unless an outsized message grew it.
func putMIMEBuf(b *[]byte) {
	if cap(*b) <= 1<<20 {
		mimeBufs.Put(b)
	}
}

// dial opens sl's connection: connect (TLS from the first byte when so
// configured), EHLO, STARTTLS and AUTH as configured, all by go-mail; then notes
// the extensions the transaction uses.
func (p *SMTP) dial(ctx context.Context, sl *smtpSlot) error {
	c, err := p.client.DialToSMTPClientWithContext(context.WithValue(ctx, slotKey{}, sl))
	if err != nil {
		if sl.raw != nil {
			sl.raw.Close() //nolint:errcheck // the dial error is the one to report
			sl.raw = nil
		}
		return err
	}
	sl.c = c
	sl.answered = time.Now()
	sl.pipelining, _ = c.Extension("PIPELINING")
	chunking, _ := c.Extension("CHUNKING")
	sl.chunking = chunking && sl.pipelining && !p.settings.NoChunking
	// The MAIL parameters go-mail sent: BODY=8BITMIME and SMTPUTF8 when offered.
	sl.mailParams = ""
	if ok, _ := c.Extension("8BITMIME"); ok {
		sl.mailParams += " BODY=8BITMIME"
	}
	if ok, _ := c.Extension("SMTPUTF8"); ok {
		sl.mailParams += " SMTPUTF8"
	}
	return nil
}

// drop closes a slot's broken connection without QUIT, which could only hang.
func (p *SMTP) drop(sl *smtpSlot) {
	if sl.raw != nil {
		sl.raw.Close() //nolint:errcheck // the connection is already broken
		sl.raw = nil
	}
	if sl.c != nil {
		sl.c.Close() //nolint:errcheck // the connection is already broken
		sl.c = nil
	}
}

// Idempotent is false: SMTP has no way to ask "did you already take this one?".
func (p *SMTP) Idempotent() bool { return IdempotentKind("smtp") }

// Close is Shutdown bounded by the provider's Timeout.
func (p *SMTP) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	return p.Shutdown(ctx)
}

// Shutdown waits for in-flight sends (each is cut when its own context ends),
// then says QUIT on every open connection, all at once and bounded by ctx. A
// connection that cannot take the QUIT (the relay closed it while it sat idle,
// or it outlived its deadline) is only closed: that is no failed shutdown, and it
// is logged at debug level. Later calls do nothing; it always returns nil.
func (p *SMTP) Shutdown(ctx context.Context) error {
	p.once.Do(func() {
		close(p.done)
		var open []*smtpSlot
		for range cap(p.slots) {
			select {
			case sl := <-p.slots:
				if sl.c != nil {
					open = append(open, sl)
				}
			case <-ctx.Done():
				p.log.Debug("smtp shutdown: sends still in flight at the deadline", "err", ctx.Err())
			}
		}
		var wg sync.WaitGroup
		for _, sl := range open {
			wg.Add(1)
			go func() {
				defer wg.Done()
				raw := sl.raw
				stop := context.AfterFunc(ctx, func() { raw.Close() }) //nolint:errcheck // bounded QUIT
				defer stop()
				wait := p.timeout
				if d, ok := ctx.Deadline(); ok {
					wait = min(wait, time.Until(d))
				}
				err := sl.c.UpdateDeadline(max(wait, time.Millisecond))
				if err == nil {
					err = p.client.CloseWithSMTPClient(sl.c)
				}
				if err != nil {
					p.log.Debug("smtp connection closed without QUIT", "err", err)
				}
				p.drop(sl)
			}()
		}
		wg.Wait()
	})
	return nil
}

// dialError classifies a failure to connect, greet, STARTTLS or authenticate:
// nothing was handed over, so it is Temporary for the message; a refusal of the
// credentials (RFC 4954: 530 authentication required, 534 mechanism too weak, 535
// credentials invalid, 538 encryption required) is the sender's configuration,
// counted against the sender like a native API's 401, so a wrong password pauses
// its campaigns instead of retrying every recipient.
func dialError(err error) *Error {
	e := classed(Temporary, 0, fmt.Errorf("smtp connect: %w", err))
	e.RouteDown = true
	var te *textproto.Error
	if errors.As(err, &te) {
		e.Code = te.Code
		switch te.Code {
		case 530, 534, 535, 538:
			e.Config = true
		}
	}
	return e
}
