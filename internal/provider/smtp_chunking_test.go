package provider_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
)

// TestSMTPChunksASingleRecipientMessage: a relay that offers PIPELINING and
// CHUNKING gets MAIL, RCPT and the message as one BDAT LAST chunk in one write,
// as it is (a line that starts with a dot is not doubled, no end-of-data mark);
// a message with a Cc still goes after DATA, so that a refused recipient can
// refuse it before any of it is sent.
func TestSMTPChunksASingleRecipientMessage(t *testing.T) {
	t.Parallel()
	relay, addr := startScriptRelay(t, &scriptRelay{pipelining: true, chunking: true})
	p := smtpProvider(t, addr, 5*time.Second)
	m := testMessage("campaign:1:1")
	m.Text = "Hello Ada\r\n.a line that starts with a dot\r\n."
	m.HTML = ""
	_, err := p.Send(context.Background(), m)
	require.NoError(t, err)
	_, err = p.Send(context.Background(), testMessage("campaign:1:2"))
	require.NoError(t, err)
	cc := testMessage("campaign:1:3")
	cc.Cc = []string{"grace@example.org"}
	_, err = p.Send(context.Background(), cc)
	require.NoError(t, err)

	batched, commands, messages, conns := relay.snapshot()
	require.Equal(t, []string{"EHLO", "MAIL", "RCPT", "BDAT", "MAIL", "RCPT", "BDAT", "MAIL", "RCPT", "RCPT", "DATA"}, commands)
	require.Equal(t, []bool{true, true, true}, batched)
	require.Equal(t, 1, conns)
	require.Len(t, messages, 3)
	require.Contains(t, messages[0], "\r\n.a line that starts with a dot\r\n.\r\n")
	require.NotContains(t, messages[0], "..a line")
	require.Contains(t, messages[1], "Message-ID: <campaign.1.2@example.com>\r\n")
	require.Contains(t, messages[2], "Cc: <grace@example.org>\r\n")
	for i, msg := range messages {
		require.True(t, len(msg) > 2 && msg[len(msg)-2:] == "\r\n", "message %d ends its last line", i)
	}
}

// TestSMTPChunkedRefusalsClassifyAsOneAtATime: in one write, a refusal means what
// it means one command at a time (the first refusal decides), the connection is
// reset and kept unless the relay closes it, and the next message goes out. A
// relay that answers the chunk 250 after refusing its envelope cannot be
// believed either way: Ambiguous, and the connection is not reused. A relay that
// takes the chunk and closes without an answer may have queued it: Ambiguous,
// not sent again.
func TestSMTPChunkedRefusalsClassifyAsOneAtATime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		script   map[string]string
		class    provider.Class
		code     int
		messages int // chunks the relay read for the refused message
		conns    int // connections once the next message went out
		reset    bool
	}{
		{"mail 451", map[string]string{"MAIL": "451 4.3.0 try later", "RCPT": "503 5.5.1 no MAIL",
			"BDAT": "503 5.5.1 no RCPT"}, provider.Temporary, 451, 1, 1, true},
		{"mail 550", map[string]string{"MAIL": "550 5.7.1 sender refused", "RCPT": "503 5.5.1 no MAIL",
			"BDAT": "503 5.5.1 no RCPT"}, provider.Permanent, 550, 1, 1, true},
		{"rcpt 550", map[string]string{"RCPT": "550 5.1.1 no such user", "BDAT": "554 5.5.1 no valid recipients"},
			provider.Permanent, 550, 1, 1, true},
		{"rcpt 452", map[string]string{"RCPT": "452 4.5.3 too many recipients", "BDAT": "554 5.5.1 no valid recipients"},
			provider.Temporary, 452, 1, 1, true},
		{"bdat 554", map[string]string{"BDAT": "554 5.3.4 message refused"}, provider.Permanent, 554, 1, 1, true},
		{"bdat 452", map[string]string{"BDAT": "452 4.3.1 out of storage"}, provider.Temporary, 452, 1, 1, true},
		{"mail 421", map[string]string{"MAIL": "421 4.3.2 shutting down"}, provider.Temporary, 421, 0, 2, false},
		{"bdat 250 after rcpt 550", map[string]string{"RCPT": "550 5.1.1 no such user"}, provider.Ambiguous, 0, 1, 2, false},
		{"bdat unanswered", map[string]string{"BDAT": "close"}, provider.Ambiguous, 0, 1, 2, false},
	} {
		relay, addr := startScriptRelay(t, &scriptRelay{pipelining: true, chunking: true, first: tc.script})
		p := smtpProvider(t, addr, 5*time.Second)
		_, err := p.Send(context.Background(), testMessage("campaign:1:1"))
		require.Error(t, err, tc.name)
		pe, ok := provider.AsError(err)
		require.True(t, ok, "%s: %v", tc.name, err)
		require.Equal(t, tc.class, pe.Class, "%s: %v", tc.name, err)
		require.Equal(t, tc.code, pe.Code, "%s: %v", tc.name, err)

		_, err = p.Send(context.Background(), testMessage("campaign:1:2"))
		require.NoError(t, err, "%s: the next message goes out", tc.name)
		_, commands, messages, conns := relay.snapshot()
		require.Equal(t, tc.conns, conns, tc.name)
		require.Len(t, messages, tc.messages+1, "%s: the refused message is not sent again", tc.name)
		require.Contains(t, messages[len(messages)-1], "<campaign.1.2@example.com>", tc.name)
		if tc.reset {
			require.Contains(t, commands, "RSET", "%s: the refused transaction is reset", tc.name)
		} else {
			require.NotContains(t, commands, "RSET", tc.name)
		}
	}
}

// TestSMTPIdleConnectionTakesTheTwoStepPath: on a connection the relay last
// answered more than a second ago the envelope goes first (pipelined, with
// DATA), so that a relay which has closed it meanwhile fails MAIL FROM before any
// of the message is on the wire.
func TestSMTPIdleConnectionTakesTheTwoStepPath(t *testing.T) {
	t.Parallel()
	relay, addr := startScriptRelay(t, &scriptRelay{pipelining: true, chunking: true})
	p := smtpProvider(t, addr, 5*time.Second)
	_, err := p.Send(context.Background(), testMessage("campaign:1:1"))
	require.NoError(t, err)
	time.Sleep(1100 * time.Millisecond)
	_, err = p.Send(context.Background(), testMessage("campaign:1:2"))
	require.NoError(t, err)
	_, err = p.Send(context.Background(), testMessage("campaign:1:3"))
	require.NoError(t, err)
	_, commands, messages, _ := relay.snapshot()
	require.Equal(t, []string{"EHLO", "MAIL", "RCPT", "BDAT", "MAIL", "RCPT", "DATA", "MAIL", "RCPT", "BDAT"}, commands)
	require.Len(t, messages, 3)
}

// TestSMTPNoChunkingUsesData: with NoChunking (SENDONCE_SMTP_CHUNKING=false) a
// relay that offers CHUNKING still gets the message after DATA.
func TestSMTPNoChunkingUsesData(t *testing.T) {
	t.Parallel()
	relay, addr := startScriptRelay(t, &scriptRelay{pipelining: true, chunking: true})
	p := smtpProvider(t, addr, 5*time.Second, func(s *provider.SMTPSettings) { s.NoChunking = true })
	for _, job := range []string{"campaign:1:1", "campaign:1:2"} {
		_, err := p.Send(context.Background(), testMessage(job))
		require.NoError(t, err)
	}
	_, commands, messages, _ := relay.snapshot()
	require.Equal(t, []string{"EHLO", "MAIL", "RCPT", "DATA", "MAIL", "RCPT", "DATA"}, commands)
	require.Len(t, messages, 2)
}
