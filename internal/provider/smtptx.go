package provider

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/textproto"
	"slices"
	"strconv"
	"time"
)

// smtpStage is how far an SMTP transaction got; it decides what a failure means.
type smtpStage int

const (
	stageConn smtpStage = iota // before any command: the pooled connection itself
	stageMail                  // MAIL FROM
	stageRcpt                  // RCPT TO
	stageData                  // the DATA command
	stageBody                  // writing the message
	stageDot                   // the reply to the final "."
)

var stageNames = [...]string{"smtp connection", "smtp MAIL FROM", "smtp RCPT TO", "smtp DATA",
	"smtp message content", "smtp end of data"}

// smtpFailure is a failed transaction.
type smtpFailure struct {
	stage smtpStage
	// code is the relay's 4xx or 5xx reply, 0 when it gave none (the connection
	// broke, timed out, or answered out of turn).
	code int
	// broken marks a connection that cannot carry another transaction: no reply,
	// 421 (the relay is closing it), a reply out of turn, or a failed reset.
	broken bool
	err    error
}

func (f *smtpFailure) Error() string { return stageNames[f.stage] + ": " + f.err.Error() }
func (f *smtpFailure) Unwrap() error { return f.err }

// class is the failure's meaning for the recipient (the table on SMTP).
func (f *smtpFailure) class() Class {
	switch {
	case f.code >= 500:
		return Permanent
	case f.code >= 400:
		return Temporary
	case f.stage >= stageBody:
		return Ambiguous
	}
	return Temporary
}

// routeDown reports whether the failure refuses the route rather than the
// recipient, before any of the message was written: the connection broke or the
// relay closed it (421) before the body, or it refused the envelope sender.
// A refused RCPT or DATA is about this message, not the relay.
func (f *smtpFailure) routeDown() bool {
	return f.stage < stageBody && (f.stage <= stageMail || f.code == 0 || f.code == 421)
}

// stale reports whether the failure is how a connection the relay closed while
// it sat idle fails: before any of the message was sent, without an answer or
// with 421 ("421 4.4.2 Idle timeout"). Sending again on a fresh connection cannot
// make a second copy.
func (f *smtpFailure) stale() bool {
	return f.stage < stageBody && (f.code == 0 || f.code == 421)
}

// replyFailure makes the failure of a command whose reply did not come or was
// not the expected one.
func replyFailure(stage smtpStage, err error) *smtpFailure {
	f := &smtpFailure{stage: stage, err: err, broken: true}
	var te *textproto.Error
	if errors.As(err, &te) && te.Code >= 400 && te.Code < 600 {
		f.code = te.Code
		f.broken = te.Code == 421
	}
	return f
}

// transact sends msg (the message as it goes on the wire: dot-stuffed, with the
// end-of-data mark) from the envelope sender to its recipients (To, then Cc and
// Bcc) over sl's connection. A refused recipient refuses the transaction: a
// message is delivered to all its recipients or not sent.
func (p *SMTP) transact(sl *smtpSlot, from string, rcpts []string, msg []byte) *smtpFailure {
	c := sl.c
	if err := c.UpdateDeadline(p.timeout); err != nil {
		return &smtpFailure{stage: stageConn, broken: true, err: err}
	}
	t := c.Text
	w, r := t.W, t.R
	// The envelope's addresses in angle brackets, quoted where RFC 5321 needs it.
	var scratch [256]byte
	writeAddr := func(addr string) {
		w.Write(appendAddress(scratch[:0], "", addr)) //nolint:errcheck // bufio keeps the error for Flush
	}
	type command struct {
		stage  smtpStage
		expect int
		rcpt   string
	}
	var fixed [4]command
	commands := append(fixed[:0], command{stage: stageMail, expect: 250})
	for _, to := range rcpts {
		commands = append(commands, command{stage: stageRcpt, expect: 25, rcpt: to})
	}
	commands = append(commands, command{stage: stageData, expect: 354})
	write := func(cmd command) {
		switch cmd.stage {
		case stageMail:
			w.WriteString("MAIL FROM:") //nolint:errcheck // bufio keeps the error for Flush
			writeAddr(from)
			w.WriteString(sl.mailParams) //nolint:errcheck // idem
			w.WriteString("\r\n")        //nolint:errcheck // idem
		case stageRcpt:
			w.WriteString("RCPT TO:") //nolint:errcheck // idem
			writeAddr(cmd.rcpt)
			w.WriteString("\r\n") //nolint:errcheck // idem
		case stageData:
			w.WriteString("DATA\r\n") //nolint:errcheck // idem
		}
	}

	var fail *smtpFailure
	dataAccepted := false
	if sl.pipelining {
		// RFC 2920: the three commands in one write, then every reply in order.
		for _, cmd := range commands {
			write(cmd)
		}
		if err := w.Flush(); err != nil {
			return &smtpFailure{stage: stageMail, broken: true, err: err}
		}
		for _, cmd := range commands {
			err := readReply(r, cmd.expect)
			if err == nil {
				dataAccepted = cmd.stage == stageData
				continue
			}
			f := replyFailure(cmd.stage, err)
			if fail == nil {
				fail = f
			}
			if f.broken {
				fail.broken = true
				return fail
			}
		}
	} else {
		for _, cmd := range commands {
			write(cmd)
			if err := w.Flush(); err != nil {
				return &smtpFailure{stage: cmd.stage, broken: true, err: err}
			}
			if err := readReply(r, cmd.expect); err != nil {
				fail = replyFailure(cmd.stage, err)
				break
			}
		}
		dataAccepted = fail == nil
	}
	if fail != nil {
		if dataAccepted && len(rcpts) > 1 {
			// Some recipient was accepted (that is why DATA was): a lone "." would
			// deliver an empty message to it. Only closing the connection in the
			// middle of DATA ends the transaction without delivering anything.
			fail.broken = true
			return fail
		}
		p.abort(t, fail, dataAccepted)
		return fail
	}

	if _, err := w.Write(msg); err != nil {
		return &smtpFailure{stage: stageBody, broken: true, err: err}
	}
	if err := w.Flush(); err != nil {
		return &smtpFailure{stage: stageBody, broken: true, err: err}
	}
	if err := readReply(r, 250); err != nil {
		return replyFailure(stageDot, err)
	}
	return nil
}

// chunkFresh is how recently the relay must have answered on a connection for
// a message to go in one write (transactChunked). A relay closes an idle
// connection after minutes (RFC 5321 §4.5.3.2.7: at least five), so a connection
// that answered within the second is open; one idle for longer takes the
// two-step path, where a relay that has closed it fails MAIL FROM before any of
// the message is sent and the message is sent again on a new connection.
const chunkFresh = time.Second

// chunkable reports whether a message to n recipients goes in one write on sl.
// With several recipients it does not: one refused recipient must refuse the
// whole message, which only the two-step path can do (it ends the transaction
// before any content is sent).
//
// Nor does it when the relay has already closed the connection or said
// something out of turn (a 421 before closing): peerQuiet looks, without
// waiting, and the two-step path then finds the connection stale and sends on a
// new one. What is left is a relay that closes the connection in the
// microseconds between that look and the write — as a relay that closes it
// while the message body is on the wire leaves that message Ambiguous in either
// path.
func (sl *smtpSlot) chunkable(n int) bool {
	return sl.chunking && n == 1 && time.Since(sl.answered) < chunkFresh &&
		sl.c.Text.R.Buffered() == 0 && peerQuiet(sl.raw)
}

// transactChunked sends msg (the message as it is: not dot-stuffed, no
// end-of-data mark) to one recipient in a single write: MAIL FROM, RCPT TO and
// "BDAT <size> LAST" with the message as the chunk (RFC 3030 with RFC 2920),
// then reads the three replies. One round trip instead of two: the relay answers
// MAIL, RCPT and the chunk together.
//
// What a failure means differs from the two-step path in one place: the message
// is on the wire from the first write, so a connection that breaks before any
// reply came is Ambiguous (the relay may have queued it), not a reason to send
// again; chunkable keeps this path to connections that answered within
// chunkFresh. A write that fails cannot have delivered (the chunk is incomplete)
// and a refused MAIL or RCPT refuses the chunk (RFC 3030 §2: the relay reads it and
// answers 503/554), so those classify as they do one command at a time; the
// chunk's own refusal classifies as the final "."'s.
func (p *SMTP) transactChunked(sl *smtpSlot, from, rcpt string, msg []byte) *smtpFailure {
	c := sl.c
	if err := c.UpdateDeadline(p.timeout); err != nil {
		return &smtpFailure{stage: stageConn, broken: true, err: err}
	}
	t := c.Text
	w, r := t.W, t.R
	var scratch [256]byte
	w.WriteString("MAIL FROM:")                                  //nolint:errcheck // bufio keeps the error for Flush
	w.Write(appendAddress(scratch[:0], "", from))                //nolint:errcheck // idem
	w.WriteString(sl.mailParams)                                 //nolint:errcheck // idem
	w.WriteString("\r\nRCPT TO:")                                //nolint:errcheck // idem
	w.Write(appendAddress(scratch[:0], "", rcpt))                //nolint:errcheck // idem
	w.WriteString("\r\nBDAT ")                                   //nolint:errcheck // idem
	w.Write(strconv.AppendInt(scratch[:0], int64(len(msg)), 10)) //nolint:errcheck // idem
	w.WriteString(" LAST\r\n")                                   //nolint:errcheck // idem
	w.Write(msg)                                                 //nolint:errcheck // idem
	if err := w.Flush(); err != nil {
		// Not all of the chunk reached the connection: nothing can be delivered.
		return &smtpFailure{stage: stageMail, broken: true, err: err}
	}
	var fail *smtpFailure
	for _, cmd := range [...]struct {
		stage  smtpStage
		expect int
	}{{stageMail, 250}, {stageRcpt, 25}, {stageDot, 250}} {
		err := readReply(r, cmd.expect)
		if err == nil {
			if cmd.stage == stageDot && fail != nil {
				// The relay took the chunk after refusing its envelope: it says it
				// has the message, which the refusal says it cannot deliver.
				// Believe neither, and do not reuse the connection.
				return &smtpFailure{stage: stageDot, broken: true,
					err: fmt.Errorf("relay accepted the message after %w", fail)}
			}
			continue
		}
		f := replyFailure(cmd.stage, err)
		if f.code == 0 {
			// No reply: the relay may have the whole message.
			f.stage = max(f.stage, stageBody)
		}
		if fail == nil {
			fail = f
		}
		if f.broken {
			fail.broken = true
			return fail
		}
	}
	if fail != nil {
		p.abort(t, fail, false)
	}
	return fail
}

// abort ends a refused transaction so that the connection can carry the next
// one: a lone "." if DATA was accepted after all, then RSET. A connection that
// cannot take them is marked broken.
func (p *SMTP) abort(t *textproto.Conn, fail *smtpFailure, dataAccepted bool) {
	if fail.broken {
		return
	}
	if dataAccepted {
		if err := t.PrintfLine("."); err != nil {
			fail.broken = true
			return
		}
		if _, _, err := t.ReadResponse(0); err != nil { // any reply will do
			fail.broken = true
			return
		}
	}
	if err := t.PrintfLine("RSET"); err != nil {
		fail.broken = true
		return
	}
	if _, _, err := t.ReadResponse(250); err != nil {
		fail.broken = true
		fail.err = fmt.Errorf("%w (then RSET: %w)", fail.err, err)
	}
}

// appendEndOfData appends the end-of-data mark: CRLF "." CRLF, or "." CRLF when
// the message already ends its last line, as textproto's DotWriter closes.
func appendEndOfData(msg []byte) []byte {
	if bytes.HasSuffix(msg, []byte("\r\n")) {
		return append(msg, ".\r\n"...)
	}
	return append(msg, "\r\n.\r\n"...)
}

// dotStuff doubles, in place, the dot that starts a line of msg (RFC 5321
// §4.5.2), whose lines end in CRLF. Most messages have none and are returned as
// they are; the others grow by a byte per dot, shifted once from the end, so that
// the message still goes out in one write.
func dotStuff(msg []byte) []byte {
	n := bytes.Count(msg, []byte("\n."))
	if len(msg) > 0 && msg[0] == '.' {
		n++
	}
	if n == 0 {
		return msg
	}
	r := len(msg)
	msg = slices.Grow(msg, n)[:r+n]
	w := len(msg)
	for r > 0 {
		i := bytes.LastIndex(msg[:r], []byte("\n.")) + 1 // the dot, or 0 for the start
		w -= copy(msg[w-(r-i):w], msg[i:r])
		r = i
		if i == 0 && msg[0] != '.' {
			break
		}
		w--
		msg[w] = '.'
	}
	return msg
}

// readReply reads one reply, all its lines, and fails as textproto's
// ReadResponse does: a *textproto.Error when the code is not the one expected
// (expect 25 takes 250 and 251), a textproto.ProtocolError when the reply is
// not one. It allocates only for a failure; replies come several times per message.
func readReply(r *bufio.Reader, expect int) error {
	var fail *textproto.Error
	for first := true; ; first = false {
		line, err := readReplyLine(r)
		if err != nil {
			return err
		}
		code, more, ok := parseReplyLine(line)
		if first {
			if !ok {
				return textproto.ProtocolError("short response: " + string(line))
			}
			if !codeMatches(code, expect) {
				fail = &textproto.Error{Code: code, Msg: string(line[4:])}
			}
		} else if fail != nil {
			if ok && code == fail.Code {
				line = line[4:]
			}
			fail.Msg += "\n" + string(line)
		}
		if !more {
			break
		}
	}
	if fail != nil {
		return fail
	}
	return nil
}

// readReplyLine returns the next line without its line break; the part of an
// overlong line beyond the buffer is skipped.
func readReplyLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		line = bytes.Clone(line) // the next read reuses the buffer
		for err == bufio.ErrBufferFull {
			_, err = r.ReadSlice('\n')
		}
	}
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

// parseReplyLine splits "250-text" or "250 text": the code, whether lines follow.
func parseReplyLine(line []byte) (code int, more bool, ok bool) {
	if len(line) < 4 || (line[3] != ' ' && line[3] != '-') {
		return 0, false, false
	}
	for _, c := range line[:3] {
		if c < '0' || c > '9' {
			return 0, false, false
		}
		code = code*10 + int(c-'0')
	}
	return code, line[3] == '-', code >= 100
}

// codeMatches checks a reply code against an expected code of one, two or three digits.
func codeMatches(code, expect int) bool {
	switch {
	case expect < 10:
		return code/100 == expect
	case expect < 100:
		return code/10 == expect
	}
	return code == expect
}
