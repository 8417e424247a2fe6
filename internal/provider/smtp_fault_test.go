package provider_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
)

// idleRelay is a go-smtp relay that closes connections idle for longer than its
// ReadTimeout the way real relays do: "421 4.4.2 Idle timeout", then close.
type idleRelay struct {
	mu       sync.Mutex
	sessions int
	accepted int
	closed   chan struct{}
}

func (r *idleRelay) NewSession(*gosmtp.Conn) (gosmtp.Session, error) {
	r.mu.Lock()
	r.sessions++
	r.mu.Unlock()
	return &idleSession{r}, nil
}

type idleSession struct{ r *idleRelay }

func (s *idleSession) Reset()                                 {}
func (s *idleSession) Mail(string, *gosmtp.MailOptions) error { return nil }
func (s *idleSession) Rcpt(string, *gosmtp.RcptOptions) error { return nil }
func (s *idleSession) Logout() error                          { s.r.closed <- struct{}{}; return nil }
func (s *idleSession) Data(r io.Reader) error {
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	s.r.mu.Lock()
	s.r.accepted++
	s.r.mu.Unlock()
	return nil
}

func smtpProvider(t *testing.T, addr string, timeout time.Duration, opts ...func(*provider.SMTPSettings)) *provider.SMTP {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	portNum, err := strconv.Atoi(port)
	require.NoError(t, err)
	s := provider.SMTPSettings{Host: host, Port: portNum, Security: "none", Conns: 1, Timeout: timeout}
	for _, o := range opts {
		o(&s)
	}
	p, err := provider.NewSMTP(s)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// TestSMTPIdleTimeout421RedialsUncharged: the relay closed the pooled connection
// while it sat idle, with "421 4.4.2 Idle timeout". The next message must go out
// on a fresh connection without an error (nothing charged, nothing requeued).
func TestSMTPIdleTimeout421RedialsUncharged(t *testing.T) {
	t.Parallel()
	relay := &idleRelay{closed: make(chan struct{}, 4)}
	srv := gosmtp.NewServer(relay)
	srv.Domain = "relay.localhost"
	srv.ReadTimeout = 200 * time.Millisecond
	srv.AllowInsecureAuth = true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	p := smtpProvider(t, ln.Addr().String(), 5*time.Second)

	_, err = p.Send(context.Background(), testMessage("campaign:1:1"))
	require.NoError(t, err)
	<-relay.closed // the relay answered 421 to the idle connection and closed it

	_, err = p.Send(context.Background(), testMessage("campaign:1:2"))
	require.NoError(t, err, "a stale pooled connection is not the message's failure")
	relay.mu.Lock()
	defer relay.mu.Unlock()
	require.Equal(t, 2, relay.accepted)
	require.Equal(t, 2, relay.sessions, "the second message went out on a fresh connection")
}

// TestSMTPExchangeIsCutWhenTheContextEnds: the context (the shutdown deadline, the
// lease) bounds the whole exchange, not only the wait for a connection. A relay
// that takes 3 s to answer the final dot is cut off; the message may have been
// taken, so the outcome is ambiguous, and the cut is named.
func TestSMTPExchangeIsCutWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	s := sink.NewSMTP(sink.SMTPOptions{Latency: 3 * time.Second})
	addr, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	p := smtpProvider(t, addr, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = p.Send(ctx, testMessage("campaign:1:1"))
	require.Error(t, err)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	require.Equal(t, provider.Ambiguous, provider.ClassOf(err), "%v", err)
}

// TestSMTPCloseAfterIdleConnectionsOutlivedTheirTimeout: a pooled connection idle
// past the SMTP timeout cannot take a QUIT; closing it is not a failed shutdown.
func TestSMTPCloseAfterIdleConnectionsOutlivedTheirTimeout(t *testing.T) {
	t.Parallel()
	s := sink.NewSMTP(sink.SMTPOptions{})
	addr, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	p := smtpProvider(t, addr, 100*time.Millisecond)
	_, err = p.Send(context.Background(), testMessage("campaign:1:1"))
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond) // idle past the connection's deadline
	require.NoError(t, p.Close())
}
