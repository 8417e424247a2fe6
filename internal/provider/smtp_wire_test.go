package provider

import (
	"context"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/sink"
)

// TestSMTPWireCarriesTheMessage: what a go-smtp relay receives, dot-unstuffed,
// reads back as the message, for random messages full of lines that start with a
// dot, bare line breaks and non-ASCII text, on one pipelined connection.
func TestSMTPWireCarriesTheMessage(t *testing.T) {
	t.Parallel()
	s := sink.NewSMTP(sink.SMTPOptions{KeepMessages: true})
	addr, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	host, port, _ := net.SplitHostPort(addr)
	portNum, _ := strconv.Atoi(port)
	p, err := NewSMTP(SMTPSettings{Host: host, Port: portNum, Security: "none", Conns: 1, Timeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })

	r := rand.New(rand.NewPCG(14, 2026))
	var sent []Message
	for i := range 300 {
		m := randomMessage(r)
		m.MessageID = "wire." + strconv.Itoa(i) + "@example.com"
		m.To = "ada@example.org"
		// As in TestMIMEParsesBack: no literal encoded word, no bare CR.
		m.Subject = strings.ReplaceAll(m.Subject, "=?", "=")
		m.Text = strings.ReplaceAll(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\r", "\n")
		m.HTML = strings.ReplaceAll(strings.ReplaceAll(m.HTML, "\r\n", "\n"), "\r", "\n")
		if i%3 == 0 {
			m.Text = ".\n." + m.Text + "\n.\n" // dots at the start of lines, and a last line of one dot
		}
		_, err := p.Send(context.Background(), m)
		require.NoError(t, err, "message %d", i)
		sent = append(sent, m)
	}
	got := s.Messages()
	require.Len(t, got, len(sent))
	require.EqualValues(t, 1, s.Stats().Connections)
	for i, m := range sent {
		require.Equal(t, m.MessageID, got[i].MessageID)
		pm := parseMIME(t, got[i].Raw)
		text, html := crlf(m.Text), crlf(m.HTML)
		// A single-part message whose body does not end its last line gets the
		// CRLF that SMTP's end of data needs (as textproto's DotWriter added).
		switch {
		case m.HTML == "" && text != "" && !strings.HasSuffix(text, "\r\n"):
			text += "\r\n"
		case m.Text == "" && html != "" && !strings.HasSuffix(html, "\r\n"):
			html += "\r\n"
		}
		require.Equal(t, text, pm.Text, "message %d", i)
		require.Equal(t, html, pm.HTML, "message %d", i)
		require.Equal(t, strings.Fields(m.Subject), strings.Fields(pm.Subject), "message %d", i)
	}
}
