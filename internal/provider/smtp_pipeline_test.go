package provider_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
)

// scriptRelay is a relay that answers from a script, to see how the provider
// writes commands (pipelined or one at a time) and what it does with refusals a
// go-smtp server would not give (a DATA accepted after a refused RCPT).
type scriptRelay struct {
	pipelining bool
	// chunking offers CHUNKING (RFC 3030) too; a BDAT chunk is answered like
	// the final ".", and the answer "close" closes the connection unanswered.
	chunking bool

	mu sync.Mutex
	// first are the answers to MAIL, RCPT, DATA and "." (the end of data) in
	// the first transaction; the others succeed.
	first map[string]string
	mails int
	// batched records, per MAIL, whether RCPT and DATA had arrived with it.
	batched  []bool
	commands []string
	messages []string
	conns    int
}

func newScriptRelay(t *testing.T, pipelining bool, first map[string]string) (*scriptRelay, string) {
	t.Helper()
	return startScriptRelay(t, &scriptRelay{pipelining: pipelining, first: first})
}

func startScriptRelay(t *testing.T, r *scriptRelay) (*scriptRelay, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.conns++
			r.mu.Unlock()
			go r.serve(c)
		}
	}()
	return r, ln.Addr().String()
}

func (r *scriptRelay) next(verb, success string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if reply, ok := r.first[verb]; ok && r.mails == 1 {
		return reply
	}
	return success
}

func (r *scriptRelay) serve(c net.Conn) {
	defer c.Close()
	in := bufio.NewReader(c)
	say := func(line string) bool {
		_, err := c.Write([]byte(line + "\r\n"))
		return err == nil
	}
	if !say("220 relay.test ESMTP") {
		return
	}
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, _, _ := strings.Cut(strings.ToUpper(line), " ")
		if strings.HasPrefix(verb, "MAIL") || strings.HasPrefix(verb, "RCPT") {
			verb = verb[:4]
		}
		r.mu.Lock()
		r.commands = append(r.commands, verb)
		if verb == "MAIL" {
			r.mails++
			r.batched = append(r.batched, in.Buffered() > 0)
		}
		r.mu.Unlock()
		var reply string
		switch verb {
		case "EHLO":
			reply = "250-relay.test\r\n250-8BITMIME"
			if r.pipelining {
				reply += "\r\n250-PIPELINING"
			}
			if r.chunking {
				reply += "\r\n250-CHUNKING"
			}
			reply += "\r\n250 ENHANCEDSTATUSCODES"
		case "MAIL":
			reply = r.next("MAIL", "250 2.1.0 OK")
		case "RCPT":
			reply = r.next("RCPT", "250 2.1.5 OK")
		case "DATA":
			reply = r.next("DATA", "354 go ahead")
			if !say(reply) {
				return
			}
			if !strings.HasPrefix(reply, "354") {
				continue
			}
			var data strings.Builder
			for {
				l, err := in.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(strings.TrimPrefix(l, "."))
			}
			r.mu.Lock()
			r.messages = append(r.messages, data.String())
			r.mu.Unlock()
			reply = r.next(".", "250 2.0.0 queued")
		case "BDAT":
			var size int
			var last string
			if n, _ := fmt.Sscanf(line[len("BDAT "):], "%d %s", &size, &last); n != 2 || last != "LAST" {
				return // the provider sends its message as one last chunk
			}
			chunk := make([]byte, size)
			if _, err := io.ReadFull(in, chunk); err != nil {
				return
			}
			r.mu.Lock()
			r.messages = append(r.messages, string(chunk))
			r.mu.Unlock()
			reply = r.next("BDAT", "250 2.0.0 queued")
			if reply == "close" {
				return
			}
		case "RSET", "NOOP":
			reply = "250 2.0.0 OK"
		case "QUIT":
			say("221 2.0.0 bye")
			return
		default:
			reply = "500 5.5.2 what?"
		}
		if !say(reply) || strings.HasPrefix(reply, "421") {
			return
		}
	}
}

func (r *scriptRelay) snapshot() (batched []bool, commands, messages []string, conns int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bool(nil), r.batched...), append([]string(nil), r.commands...),
		append([]string(nil), r.messages...), r.conns
}

// TestSMTPPipelinesTheEnvelope: a relay that offers PIPELINING gets MAIL, RCPT
// and DATA in one write; one that does not gets each after the previous reply.
func TestSMTPPipelinesTheEnvelope(t *testing.T) {
	t.Parallel()
	for _, pipelining := range []bool{true, false} {
		relay, addr := newScriptRelay(t, pipelining, nil)
		p := smtpProvider(t, addr, 5*time.Second)
		for _, job := range []string{"campaign:1:1", "campaign:1:2"} {
			_, err := p.Send(context.Background(), testMessage(job))
			require.NoError(t, err, "pipelining=%v", pipelining)
		}
		batched, commands, messages, conns := relay.snapshot()
		require.Equal(t, []bool{pipelining, pipelining}, batched, "pipelining=%v", pipelining)
		require.Equal(t, []string{"EHLO", "MAIL", "RCPT", "DATA", "MAIL", "RCPT", "DATA"}, commands)
		require.Len(t, messages, 2)
		require.Contains(t, messages[1], "Message-ID: <campaign.1.2@example.com>\r\n")
		require.Equal(t, 1, conns)
	}
}

// TestSMTPPipelinedRefusalsClassifyAsOneAtATime: with or without PIPELINING, a
// refusal means the same (the first refusal decides, whatever the relay answers
// to the commands after it), the connection is reset and kept unless the relay
// closes it, and the next message goes out. A relay that accepts DATA after
// refusing the recipient gets a lone "." and delivers nothing.
func TestSMTPPipelinedRefusalsClassifyAsOneAtATime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		script   map[string]string
		class    provider.Class
		code     int
		messages int // messages the relay took for the refused one: an empty one, or the refused one
		conns    int // connections once the next message went out
	}{
		{"mail 451", map[string]string{"MAIL": "451 4.3.0 try later", "RCPT": "503 5.5.1 no MAIL",
			"DATA": "503 5.5.1 no RCPT"}, provider.Temporary, 451, 0, 1},
		{"mail 550", map[string]string{"MAIL": "550 5.7.1 sender refused", "RCPT": "503 5.5.1 no MAIL",
			"DATA": "503 5.5.1 no RCPT"}, provider.Permanent, 550, 0, 1},
		{"rcpt 550", map[string]string{"RCPT": "550 5.1.1 no such user", "DATA": "554 5.5.1 no valid recipients"},
			provider.Permanent, 550, 0, 1},
		// Pipelined, DATA is already sent when RCPT's refusal comes: the relay
		// gets a lone "." (an empty message it cannot deliver for lack of a
		// recipient). One at a time, DATA is never sent.
		{"rcpt 452 then data accepted", map[string]string{"RCPT": "452 4.5.3 too many recipients", "DATA": "354 go ahead",
			".": "554 5.5.1 no valid recipients"}, provider.Temporary, 452, 1, 1},
		{"data 554", map[string]string{"DATA": "554 5.3.4 message refused"}, provider.Permanent, 554, 0, 1},
		{"dot 452", map[string]string{".": "452 4.3.1 out of storage"}, provider.Temporary, 452, 1, 1},
		{"mail 421", map[string]string{"MAIL": "421 4.3.2 shutting down"}, provider.Temporary, 421, 0, 2},
	} {
		for _, pipelining := range []bool{true, false} {
			relay, addr := newScriptRelay(t, pipelining, tc.script)
			p := smtpProvider(t, addr, 5*time.Second)
			_, err := p.Send(context.Background(), testMessage("campaign:1:1"))
			require.Error(t, err, "%s, pipelining=%v", tc.name, pipelining)
			pe, ok := provider.AsError(err)
			require.True(t, ok)
			require.Equal(t, tc.class, pe.Class, "%s, pipelining=%v: %v", tc.name, pipelining, err)
			require.Equal(t, tc.code, pe.Code, "%s, pipelining=%v", tc.name, pipelining)

			_, err = p.Send(context.Background(), testMessage("campaign:1:2"))
			require.NoError(t, err, "%s, pipelining=%v: the next message goes out", tc.name, pipelining)
			_, commands, messages, conns := relay.snapshot()
			require.Equal(t, tc.conns, conns, "%s, pipelining=%v", tc.name, pipelining)
			taken := tc.messages
			if tc.name == "rcpt 452 then data accepted" {
				if pipelining {
					require.Empty(t, messages[0], "a lone dot")
				} else {
					taken = 0
				}
			}
			require.Len(t, messages, taken+1, "%s, pipelining=%v", tc.name, pipelining)
			require.Contains(t, messages[len(messages)-1], "<campaign.1.2@example.com>")
			if tc.conns == 1 && tc.name != "dot 452" {
				require.Contains(t, commands, "RSET", "%s, pipelining=%v: the refused transaction is reset", tc.name, pipelining)
			}
		}
	}
}

// TestSMTPReadsMultilineAndOverlongReplies: a refusal over several lines, and one
// longer than the read buffer, classify by their code and keep the connection.
func TestSMTPReadsMultilineAndOverlongReplies(t *testing.T) {
	t.Parallel()
	for name, reply := range map[string]string{
		"multiline": "550-5.1.1 no such user\r\n550-5.1.1 see https://example.com/help\r\n550 5.1.1 bye",
		"overlong":  "452 4.2.2 " + strings.Repeat("mailbox full ", 1000),
	} {
		relay, addr := newScriptRelay(t, true, map[string]string{"RCPT": reply})
		p := smtpProvider(t, addr, 5*time.Second)
		_, err := p.Send(context.Background(), testMessage("campaign:1:1"))
		pe, ok := provider.AsError(err)
		require.True(t, ok, "%s: %v", name, err)
		require.Equal(t, reply[:3], strconv.Itoa(pe.Code), name)
		if name == "multiline" {
			require.ErrorContains(t, err, "see https://example.com/help")
		}
		_, err = p.Send(context.Background(), testMessage("campaign:1:2"))
		require.NoError(t, err, name)
		_, _, _, conns := relay.snapshot()
		require.Equal(t, 1, conns, name)
	}
}
