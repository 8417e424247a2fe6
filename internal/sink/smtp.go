package sink

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/mail"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// Fault is what the SMTP sink does to one recipient's message.
type Fault int

const (
	// Deliver accepts the message.
	Deliver Fault = iota
	// RcptTemp answers RCPT with 451 4.3.0.
	RcptTemp
	// RcptPerm answers RCPT with 550 5.1.1 (no such user).
	RcptPerm
	// DataTemp reads the message and answers the final dot with 451, storing nothing.
	DataTemp
	// DataPerm reads the message and answers the final dot with 554, storing nothing.
	DataPerm
	// DropAfterData stores the message and closes the connection instead of
	// answering 250: the sender cannot know it was delivered (RFC 1047).
	DropAfterData
	// DropDuringData reads part of the message and closes the connection: nothing
	// is stored, but the sender cannot know that either.
	DropDuringData
	// RcptDefer answers RCPT with 421 4.7.0, as a receiver throttling the sender
	// does (Gmail's "421 4.7.0 Try again later").
	RcptDefer
)

// SMTPOptions shape the SMTP sink's behaviour.
type SMTPOptions struct {
	// Latency is added before the final dot is answered.
	Latency time.Duration
	// TempRate, PermRate and DropRate are the fractions of recipients given RcptTemp,
	// RcptPerm and DropAfterData; Fault, when set, decides instead.
	TempRate, PermRate, DropRate float64
	Fault                        func(rcpt string) Fault
	// Seed makes the rates reproducible; 0 picks 1.
	Seed uint64
	// KeepMessages keeps every accepted message for Messages (tests); off, only counts are kept.
	KeepMessages bool
	// TLSConfig, when set, makes the sink offer STARTTLS, or speak TLS from the
	// first byte when ImplicitTLS is set too.
	TLSConfig   *tls.Config
	ImplicitTLS bool
	// Users, when set, makes AUTH PLAIN (over TLS only) mandatory: username → password.
	Users map[string]string
}

// SMTPMessage is one accepted message.
type SMTPMessage struct {
	From      string
	To        []string
	MessageID string // without angle brackets
	Header    mail.Header
	Raw       []byte
	// At is when the sink accepted it.
	At time.Time
}

// SMTPStats are the SMTP sink's counters, also served as JSON at GET /stats.
type SMTPStats struct {
	// RawAttempts counts RCPT commands: every try to deliver to a recipient.
	RawAttempts int64 `json:"raw_attempts"`
	Connections int64 `json:"connections"`
	// Accepted counts stored messages (dropped-after-data ones included).
	Accepted int64 `json:"accepted"`
	// Unique counts distinct Message-IDs accepted; Duplicates counts accepted
	// messages whose Message-ID had been accepted before. SMTP cannot deduplicate,
	// so this is the number of second copies a recipient saw.
	Unique     int64 `json:"unique"`
	Duplicates int64 `json:"duplicates"`
	Rejected   int64 `json:"rejected"`
	Dropped    int64 `json:"dropped"`
	// PerMessageID summarises the per-Message-ID counts: copies → number of ids.
	PerMessageID map[int]int64 `json:"per_message_id"`
}

// SMTP is the SMTP sink: a go-smtp server that records what it accepts.
type SMTP struct {
	opts SMTPOptions

	mu       sync.Mutex
	rnd      *rand.Rand
	stats    SMTPStats
	perID    map[string]int
	messages []SMTPMessage

	srv *gosmtp.Server
	// closed ends the sessions' Latency waits when the sink closes, so no session
	// outlives Close by the rest of its wait.
	closed    chan struct{}
	closeOnce sync.Once
	// listeners are closed by Close too: go-smtp's Close closes only the listeners
	// its Serve goroutine has registered, and one not yet scheduled would then
	// serve on after Close.
	listeners []net.Listener
}

// NewSMTP returns an SMTP sink; start it with Listen.
func NewSMTP(opts SMTPOptions) *SMTP {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	s := &SMTP{opts: opts, rnd: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5eed)), perID: map[string]int{},
		closed: make(chan struct{})}
	s.srv = gosmtp.NewServer(gosmtp.BackendFunc(s.newSession))
	s.srv.Domain = "sink.localhost"
	s.srv.ReadTimeout = time.Minute
	s.srv.WriteTimeout = time.Minute
	s.srv.MaxMessageBytes = 10 << 20
	s.srv.MaxRecipients = 50
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	s.srv.TLSConfig = opts.TLSConfig
	return s
}

// Listen serves SMTP on addr (use 127.0.0.1:0) and returns host:port.
func (s *SMTP) Listen(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	if s.opts.ImplicitTLS && s.opts.TLSConfig != nil {
		ln = tls.NewListener(ln, s.opts.TLSConfig)
	}
	s.mu.Lock()
	s.listeners = append(s.listeners, ln)
	s.mu.Unlock()
	go s.srv.Serve(ln) //nolint:errcheck // ends when Close closes the listener
	return ln.Addr().String(), nil
}

// Close stops the server and drops its connections, cutting short any session's
// Latency wait.
func (s *SMTP) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	err := s.srv.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ln := range s.listeners {
		_ = ln.Close() // already closed when Serve had registered it
	}
	return err
}

// Stats returns a snapshot of the counters.
func (s *SMTP) Stats() SMTPStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.PerMessageID = map[int]int64{}
	for _, n := range s.perID {
		st.PerMessageID[n]++
	}
	return st
}

// Count returns how many times a Message-ID (without brackets) was accepted.
func (s *SMTP) Count(messageID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perID[messageID]
}

// Messages returns the accepted messages (KeepMessages only), oldest first.
func (s *SMTP) Messages() []SMTPMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SMTPMessage(nil), s.messages...)
}

// StatsHandler serves GET /stats for out-of-process use.
func (s *SMTP) StatsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/stats" {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, http.StatusOK, s.Stats())
	})
}

// FetchSMTPStats reads GET /stats of an SMTP sink's stats server running elsewhere.
func FetchSMTPStats(ctx context.Context, baseURL string) (SMTPStats, error) {
	var st SMTPStats
	err := fetchJSON(ctx, strings.TrimRight(baseURL, "/")+"/stats", &st)
	return st, err
}

func (s *SMTP) newSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	s.mu.Lock()
	s.stats.Connections++
	s.mu.Unlock()
	return &smtpSession{sink: s, conn: c}, nil
}

// fault decides a recipient's fate.
func (s *SMTP) fault(rcpt string) Fault {
	if s.opts.Fault != nil {
		return s.opts.Fault(rcpt)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.rnd.Float64()
	switch {
	case x < s.opts.TempRate:
		return RcptTemp
	case x < s.opts.TempRate+s.opts.PermRate:
		return RcptPerm
	case x < s.opts.TempRate+s.opts.PermRate+s.opts.DropRate:
		return DropAfterData
	}
	return Deliver
}

// record stores an accepted message.
func (s *SMTP) record(m SMTPMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Accepted++
	s.perID[m.MessageID]++
	if s.perID[m.MessageID] == 1 {
		s.stats.Unique++
	} else {
		s.stats.Duplicates++
	}
	if s.opts.KeepMessages {
		s.messages = append(s.messages, m)
	}
}

func (s *SMTP) count(f func(*SMTPStats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

// smtpSession is one connection's transaction state.
type smtpSession struct {
	sink   *SMTP
	conn   *gosmtp.Conn
	authed bool
	from   string
	to     []string
	fault  Fault
}

// AuthMechanisms offers PLAIN when the sink has users (go-smtp advertises it on TLS only).
func (ss *smtpSession) AuthMechanisms() []string {
	if ss.sink.opts.Users == nil {
		return nil
	}
	return []string{sasl.Plain}
}

// Auth checks a PLAIN login against the sink's users.
func (ss *smtpSession) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain || ss.sink.opts.Users == nil {
		return nil, gosmtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if want, ok := ss.sink.opts.Users[user]; !ok || want != pass {
			return gosmtp.ErrAuthFailed
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *smtpSession) Reset()        { ss.from, ss.to, ss.fault = "", nil, Deliver }
func (ss *smtpSession) Logout() error { return nil }

func (ss *smtpSession) Mail(from string, _ *gosmtp.MailOptions) error {
	if ss.sink.opts.Users != nil && !ss.authed {
		return gosmtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *smtpSession) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	ss.sink.count(func(st *SMTPStats) { st.RawAttempts++ })
	switch f := ss.sink.fault(to); f {
	case RcptTemp:
		ss.sink.count(func(st *SMTPStats) { st.Rejected++ })
		return &gosmtp.SMTPError{Code: 451, EnhancedCode: gosmtp.EnhancedCode{4, 3, 0}, Message: "injected temporary failure"}
	case RcptDefer:
		ss.sink.count(func(st *SMTPStats) { st.Rejected++ })
		return &gosmtp.SMTPError{Code: 421, EnhancedCode: gosmtp.EnhancedCode{4, 7, 0}, Message: "injected: try again later"}
	case RcptPerm:
		ss.sink.count(func(st *SMTPStats) { st.Rejected++ })
		return &gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 1, 1}, Message: "injected: no such user"}
	default:
		if f > ss.fault {
			ss.fault = f
		}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *smtpSession) Data(r io.Reader) error {
	if ss.fault == DropDuringData {
		io.ReadFull(r, make([]byte, 16)) //nolint:errcheck // any part will do
		ss.sink.count(func(st *SMTPStats) { st.Dropped++ })
		ss.conn.Conn().Close() //nolint:errcheck
		return io.ErrUnexpectedEOF
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if d := ss.sink.opts.Latency; d > 0 {
		// The relay's processing time, not a test waiting.
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ss.sink.closed:
			t.Stop()
			// What a relay shutting down answers (RFC 5321 §3.8: 421, closing the
			// channel; the message is not accepted). A plain error would go out as
			// go-smtp's 554, a permanent refusal no dying relay sends.
			return &gosmtp.SMTPError{Code: 421, EnhancedCode: gosmtp.EnhancedCode{4, 3, 2}, Message: "sink: closing"}
		}
	}
	switch ss.fault {
	case DataTemp:
		ss.sink.count(func(st *SMTPStats) { st.Rejected++ })
		return &gosmtp.SMTPError{Code: 451, EnhancedCode: gosmtp.EnhancedCode{4, 3, 0}, Message: "injected: try later"}
	case DataPerm:
		ss.sink.count(func(st *SMTPStats) { st.Rejected++ })
		return &gosmtp.SMTPError{Code: 554, EnhancedCode: gosmtp.EnhancedCode{5, 6, 0}, Message: "injected: content rejected"}
	}
	m := SMTPMessage{From: ss.from, To: ss.to, Raw: raw, At: time.Now()}
	if parsed, err := mail.ReadMessage(bytes.NewReader(raw)); err == nil {
		m.Header = parsed.Header
		m.MessageID = strings.Trim(strings.TrimSpace(parsed.Header.Get("Message-Id")), "<>")
	}
	ss.sink.record(m)
	if ss.fault == DropAfterData {
		ss.sink.count(func(st *SMTPStats) { st.Dropped++ })
		// Stored, but the 250 never reaches the sender.
		ss.conn.Conn().Close() //nolint:errcheck
	}
	return nil
}
