package provider_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
)

// setupSMTP starts an SMTP sink and a provider with conns connections to it.
func setupSMTP(t *testing.T, conns int, opts sink.SMTPOptions) (*provider.SMTP, *sink.SMTP) {
	t.Helper()
	opts.KeepMessages = true
	s := sink.NewSMTP(opts)
	addr, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	portNum, err := strconv.Atoi(port)
	require.NoError(t, err)
	p, err := provider.NewSMTP(provider.SMTPSettings{
		Host: host, Port: portNum, Security: "none", Conns: conns, Timeout: 5 * time.Second,
	})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p, s
}

func TestSMTPSendsHeadersAndReusesTheConnection(t *testing.T) {
	t.Parallel()
	p, s := setupSMTP(t, 1, sink.SMTPOptions{})
	require.False(t, p.Idempotent())
	for i := range 5 {
		id, err := p.Send(context.Background(), testMessage(fmt.Sprintf("campaign:7:%d", i)))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("campaign.7.%d@example.com", i), id)
	}
	st := s.Stats()
	require.EqualValues(t, 1, st.Connections, "five messages, one connection")
	require.EqualValues(t, 5, st.Unique)
	require.Zero(t, st.Duplicates)

	m := s.Messages()[0]
	require.Equal(t, "news@example.com", m.From)
	require.Equal(t, []string{"ada@example.org"}, m.To)
	require.Equal(t, "campaign.7.0@example.com", m.MessageID)
	require.Equal(t, "<https://x.test/u/TOKEN>, <mailto:unsub@example.com?subject=unsubscribe>",
		unfold(m.Header.Get("List-Unsubscribe")))
	require.Equal(t, "List-Unsubscribe=One-Click", m.Header.Get("List-Unsubscribe-Post"))
	require.Equal(t, `"Example News" <news@example.com>`, m.Header.Get("From"))
	require.Equal(t, `"Ada Lovelace" <ada@example.org>`, m.Header.Get("To"))
	require.Equal(t, "<help@example.com>", m.Header.Get("Reply-To"))
	require.Equal(t, "Hello Ada", m.Header.Get("Subject"))
	require.Contains(t, m.Header.Get("Content-Type"), "multipart/alternative")
	body := string(m.Raw)
	require.Contains(t, body, "text/plain")
	require.Contains(t, body, "text/html")
}

// unfold undoes RFC 5322 header folding.
func unfold(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func TestSMTPSameJobSameMessageID(t *testing.T) {
	t.Parallel()
	p, s := setupSMTP(t, 2, sink.SMTPOptions{})
	for range 2 {
		_, err := p.Send(context.Background(), testMessage("campaign:1:1"))
		require.NoError(t, err)
	}
	// SMTP cannot deduplicate: the sink sees both copies under one Message-ID.
	require.Equal(t, 2, s.Count("campaign.1.1@example.com"))
	require.EqualValues(t, 1, s.Stats().Duplicates)
	require.Equal(t, map[int]int64{2: 1}, s.Stats().PerMessageID)
}

func TestSMTPClassifiesFaults(t *testing.T) {
	t.Parallel()
	faults := map[string]sink.Fault{
		"temp@example.org": sink.RcptTemp, "perm@example.org": sink.RcptPerm,
		"datatemp@example.org": sink.DataTemp, "dataperm@example.org": sink.DataPerm,
		"drop@example.org": sink.DropAfterData, "middata@example.org": sink.DropDuringData,
	}
	p, s := setupSMTP(t, 1, sink.SMTPOptions{Fault: func(rcpt string) sink.Fault { return faults[rcpt] }})
	for _, tc := range []struct {
		rcpt string
		want provider.Class
		code int
	}{
		{"temp@example.org", provider.Temporary, 451},
		{"perm@example.org", provider.Permanent, 550},
		{"datatemp@example.org", provider.Temporary, 451},
		{"dataperm@example.org", provider.Permanent, 554},
		{"drop@example.org", provider.Ambiguous, 0},
		{"middata@example.org", provider.Ambiguous, 0},
		// After each failure the next message still goes out (on a new connection after the drop).
		{"ok@example.org", 0, 0},
	} {
		m := testMessage("campaign:1:" + tc.rcpt)
		m.To = tc.rcpt
		_, err := p.Send(context.Background(), m)
		if tc.want == 0 {
			require.NoError(t, err)
			continue
		}
		require.Error(t, err, tc.rcpt)
		require.Equal(t, tc.want, provider.ClassOf(err), "%s: %v", tc.rcpt, err)
		var pe *provider.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, tc.code, pe.Code, tc.rcpt)
		// A refusal of this recipient or message, or an answer lost: never the
		// route's refusal, which would move the row to a pool's next sender.
		require.False(t, pe.RouteDown, tc.rcpt)
	}
	st := s.Stats()
	// The dropped message was stored: ambiguous really means "maybe delivered".
	require.EqualValues(t, 2, st.Accepted)
	require.EqualValues(t, 2, st.Dropped)
	require.EqualValues(t, 3, st.Connections, "only the dropped connections were replaced")
}

func TestSMTPRedialsAfterTheServerClosedAnIdleConnection(t *testing.T) {
	t.Parallel()
	s := sink.NewSMTP(sink.SMTPOptions{})
	addr, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	host, port, _ := net.SplitHostPort(addr)
	portNum, _ := strconv.Atoi(port)
	p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: portNum, Security: "none", Conns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	_, err = p.Send(context.Background(), testMessage("campaign:1:1"))
	require.NoError(t, err)

	// Restart the sink on the same port: the pooled connection is now dead.
	require.NoError(t, s.Close())
	s2 := sink.NewSMTP(sink.SMTPOptions{})
	_, err = s2.Listen(addr)
	require.NoError(t, err)
	t.Cleanup(func() { s2.Close() })

	_, err = p.Send(context.Background(), testMessage("campaign:1:2"))
	require.NoError(t, err)
	require.Equal(t, 1, s2.Count("campaign.1.2@example.com"))
}

func TestSMTPConnectFailureIsTemporary(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p, err := provider.NewSMTP(provider.SMTPSettings{Host: "127.0.0.1", Port: port, Security: "none"})
	require.NoError(t, err)
	_, err = p.Send(context.Background(), testMessage("campaign:1:1"))
	require.Equal(t, provider.Temporary, provider.ClassOf(err), "%v", err)
	pe, _ := provider.AsError(err)
	require.True(t, pe.RouteDown, "connection refused: nothing was handed over, a pool may fail over")
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
}

func TestSMTPStartTLSRequiredByDefault(t *testing.T) {
	t.Parallel()
	s := sink.NewSMTP(sink.SMTPOptions{})
	addr, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	host, port, _ := net.SplitHostPort(addr)
	portNum, _ := strconv.Atoi(port)
	// The sink offers no STARTTLS: the default policy refuses to send in clear.
	p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: portNum, Security: "starttls"})
	require.NoError(t, err)
	_, err = p.Send(context.Background(), testMessage("campaign:1:1"))
	require.Equal(t, provider.Temporary, provider.ClassOf(err), "%v", err)
	require.Zero(t, s.Stats().Accepted)
}

func TestSMTPOverTLS(t *testing.T) {
	t.Parallel()
	serverTLS, roots, err := sink.SelfSignedTLS()
	require.NoError(t, err)
	for _, security := range []string{"starttls", "tls"} {
		s := sink.NewSMTP(sink.SMTPOptions{TLSConfig: serverTLS, ImplicitTLS: security == "tls", KeepMessages: true})
		addr, err := s.Listen("127.0.0.1:0")
		require.NoError(t, err)
		host, port, _ := net.SplitHostPort(addr)
		portNum, _ := strconv.Atoi(port)
		p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: portNum, Security: security,
			TLSConfig: &tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12}})
		require.NoError(t, err)
		_, err = p.Send(context.Background(), testMessage("campaign:1:1"))
		require.NoError(t, err, security)
		require.Equal(t, 1, s.Count("campaign.1.1@example.com"), security)
		require.NoError(t, p.Close())
		require.NoError(t, s.Close())
	}
}

func TestSMTPTimeoutAfterTheFinalDotIsAmbiguous(t *testing.T) {
	t.Parallel()
	// The relay takes longer to answer the final dot than the provider waits.
	// The provider's deadline leaves room for the dialogue before the dot on a
	// loaded machine (there a timeout is, rightly, Temporary).
	s := sink.NewSMTP(sink.SMTPOptions{Latency: 4 * time.Second})
	addr, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	host, port, _ := net.SplitHostPort(addr)
	portNum, _ := strconv.Atoi(port)
	p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: portNum, Security: "none",
		Timeout: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	_, err = p.Send(context.Background(), testMessage("campaign:1:1"))
	require.Equal(t, provider.Ambiguous, provider.ClassOf(err), "%v", err)
}

func TestSMTPAuthOverStartTLS(t *testing.T) {
	t.Parallel()
	serverTLS, roots, err := sink.SelfSignedTLS()
	require.NoError(t, err)
	s := sink.NewSMTP(sink.SMTPOptions{TLSConfig: serverTLS, Users: map[string]string{"app": "s3cret"}})
	addr, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	host, port, _ := net.SplitHostPort(addr)
	portNum, _ := strconv.Atoi(port)
	send := func(user, pass string) error {
		p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: portNum, Security: "starttls",
			Username: user, Password: pass,
			TLSConfig: &tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12}})
		require.NoError(t, err)
		defer p.Close()
		_, err = p.Send(context.Background(), testMessage("campaign:1:"+user+pass))
		return err
	}
	require.NoError(t, send("app", "s3cret"))
	// A wrong password fails at connect time: temporary, nothing was handed over.
	err = send("app", "wrong")
	require.Equal(t, provider.Temporary, provider.ClassOf(err), "%v", err)
	// and a failure of the sender's credentials, counted against the sender (which
	// pauses after several in a row), not of this message.
	var pe *provider.Error
	require.ErrorAs(t, err, &pe)
	require.True(t, pe.Config, "a refused AUTH is the sender's configuration: %v", err)
	require.EqualValues(t, 1, s.Stats().Accepted)
}

// TestSMTPOverTLSAfterTheRelayRestarted: over STARTTLS and implicit TLS (where
// the look at the socket sees TLS records, not SMTP), messages go out on one
// connection with the go-smtp sink (which offers CHUNKING), and after the relay
// restarted under the pooled connection the next message goes out once, on a
// new one.
func TestSMTPOverTLSAfterTheRelayRestarted(t *testing.T) {
	t.Parallel()
	serverTLS, roots, err := sink.SelfSignedTLS()
	require.NoError(t, err)
	for _, security := range []string{"starttls", "tls"} {
		opts := sink.SMTPOptions{TLSConfig: serverTLS, ImplicitTLS: security == "tls", KeepMessages: true}
		s := sink.NewSMTP(opts)
		addr, err := s.Listen("127.0.0.1:0")
		require.NoError(t, err)
		host, port, _ := net.SplitHostPort(addr)
		portNum, _ := strconv.Atoi(port)
		p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: portNum, Security: security, Conns: 1,
			TLSConfig: &tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12}})
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		for i := 1; i <= 3; i++ {
			_, err = p.Send(context.Background(), testMessage("campaign:1:"+strconv.Itoa(i)))
			require.NoError(t, err, security)
		}
		require.EqualValues(t, 3, s.Stats().Accepted, security)
		sessions := int64(1)
		if security == "starttls" {
			sessions = 2 // go-smtp starts a new session after STARTTLS, on the same connection
		}
		require.EqualValues(t, sessions, s.Stats().Connections, security)
		msgs := s.Messages()
		require.Len(t, msgs, 3)
		require.Contains(t, string(msgs[2].Raw), "<p>Hello <b>Ada</b></p>", security)

		require.NoError(t, s.Close())
		s2 := sink.NewSMTP(opts)
		_, err = s2.Listen(addr)
		require.NoError(t, err)
		t.Cleanup(func() { s2.Close() })
		_, err = p.Send(context.Background(), testMessage("campaign:1:4"))
		require.NoError(t, err, security)
		require.Equal(t, 1, s2.Count("campaign.1.4@example.com"), security)
	}
}
