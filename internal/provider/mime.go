package provider

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"mime"
	netmail "net/mail"
	"os"
	"strings"
	"time"
)

// The message format, as the SMTP provider writes it. It is the format go-mail
// v0.8.1 wrote for the same Message (the provider built a go-mail Msg per
// recipient until the send path was measured): the generic headers sorted by
// name (Date, the extra headers, MIME-Version, Message-ID, Subject), then From,
// To and Reply-To, each folded at spaces before 76 characters and
// RFC 2047-encoded when not printable ASCII; then a multipart/alternative body
// with the text part first (clients show the last alternative they can render),
// each part quoted-printable in UTF-8. A test builds the same messages with
// go-mail and compares the bytes.
//
// It is written straight into a reused buffer instead: go-mail's Msg costs maps,
// a multipart.Writer, a quotedprintable.Writer and a copy per part, for every
// recipient.

const (
	mimeCharset   = "UTF-8"
	mimeMaxHeader = 76
	boundaryBytes = 30 // as mime/multipart: 60 hex characters
)

// reservedHeaders are the headers the provider writes itself; Message.Headers
// may not set them (with go-mail, Content-Type there silently dropped the
// multipart header, and the others were written twice or replaced).
var reservedHeaders = []string{"Date", "From", "To", "Cc", "Bcc", "Reply-To", "Subject", "Message-ID",
	"MIME-Version", "Content-Type", "Content-Transfer-Encoding"}

// genHeader is one generic header of a message being assembled.
type genHeader struct{ name, value string }

// AppendMIME appends m as an RFC 5322 message, dated now and with a random
// multipart boundary, to dst. The SMTP provider sends these bytes; the error is
// the message's own (no From or To, a line break in an address, a header the
// provider owns).
func AppendMIME(dst []byte, m Message) ([]byte, error) {
	var b [2 * boundaryBytes]byte
	return appendMIME(dst, m, time.Now(), newBoundary(&b))
}

// newBoundary fills b with a multipart boundary made, as mime/multipart makes
// it, of 30 random bytes, so that no content can contain it.
func newBoundary(b *[2 * boundaryBytes]byte) []byte {
	var r [boundaryBytes]byte
	rand.Read(r[:]) //nolint:errcheck // crypto/rand.Read never fails
	hex.Encode(b[:], r[:])
	return b[:]
}

// checkMIME reports what makes m unsendable whatever the relay says.
func checkMIME(m Message) error {
	if m.From == "" || m.To == "" {
		return fmt.Errorf("message %s: from and to are required", m.JobID)
	}
	for _, list := range [][]string{{m.From, m.To, m.ReplyTo}, m.MoreReplyTo, m.Cc, m.Bcc} {
		for _, a := range list {
			if strings.ContainsAny(a, "\r\n") {
				return fmt.Errorf("message %s: an address must not contain a line break", m.JobID)
			}
		}
	}
	for i, a := range m.Attachments {
		if a.Filename == "" || strings.ContainsAny(a.Filename, "\r\n") || strings.ContainsAny(a.ContentID, "\r\n<> ") ||
			strings.ContainsAny(a.ContentType, "\r\n") {
			return fmt.Errorf("message %s: attachment %d has a filename, content type or content id that cannot be written", m.JobID, i)
		}
	}
	for _, h := range m.Headers {
		if !isHeaderName(h.Name) {
			return fmt.Errorf("message %s: %q is not a header name", m.JobID, h.Name)
		}
		for _, r := range reservedHeaders {
			if strings.EqualFold(h.Name, r) {
				return fmt.Errorf("message %s: header %s is the provider's to write", m.JobID, h.Name)
			}
		}
	}
	return nil
}

// isHeaderName reports whether s is an RFC 5322 field name: printable ASCII but ':'.
func isHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' || s[i] == ':' {
			return false
		}
	}
	return true
}

func appendMIME(dst []byte, m Message, date time.Time, boundary []byte) ([]byte, error) {
	if err := checkMIME(m); err != nil {
		return dst, err
	}
	var dateBuf [len(time.RFC1123Z) + 4]byte
	msgID := m.MessageID
	if msgID == "" {
		msgID = fallbackMessageID()
	}
	// The generic headers in name order; an extra header replaces an earlier
	// one of exactly the same name, as go-mail's header map did.
	var fixed [8]genHeader
	hs := append(fixed[:0],
		genHeader{"Date", string(date.AppendFormat(dateBuf[:0], time.RFC1123Z))},
		genHeader{"MIME-Version", "1.0"},
		genHeader{"Message-ID", "<" + msgID + ">"},
		genHeader{"Subject", m.Subject})
	for _, h := range m.Headers {
		replaced := false
		for i := range hs {
			if hs[i].name == h.Name {
				hs[i].value, replaced = h.Value, true
			}
		}
		if !replaced {
			hs = append(hs, genHeader{h.Name, h.Value})
		}
	}
	for i := 1; i < len(hs); i++ { // insertion sort: a handful of headers
		for j := i; j > 0 && hs[j].name < hs[j-1].name; j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
	for _, h := range hs {
		dst = appendHeader(dst, h.name, mime.QEncoding.Encode(mimeCharset, h.value))
	}
	var scratch [256]byte
	dst = appendHeader(dst, "From", appendAddress(scratch[:0], m.FromName, m.From))
	dst = appendHeader(dst, "To", appendAddress(scratch[:0], m.ToName, m.To))
	if rt := m.ReplyToAll(); len(rt) > 0 {
		dst = appendHeader(dst, "Reply-To", appendAddressList(scratch[:0], rt))
	}
	if len(m.Cc) > 0 {
		dst = appendHeader(dst, "Cc", appendAddressList(scratch[:0], m.Cc))
	}
	// Bcc is never written: its addresses are only in the envelope.
	if len(m.Attachments) == 0 {
		return appendBody(dst, m, boundary), nil
	}
	return appendAttachments(dst, m, boundary), nil
}

// appendBody appends the content-type headers and body of the message's text:
// a multipart/alternative of text and HTML, or the one part there is.
func appendBody(dst []byte, m Message, boundary []byte) []byte {
	switch {
	case m.Text != "" && m.HTML != "":
		dst = append(dst, "Content-Type: multipart/alternative;\r\n boundary="...)
		dst = append(dst, boundary...)
		dst = append(dst, "\r\n\r\n--"...)
		dst = append(dst, boundary...)
		dst = append(dst, "\r\n"...)
		dst = appendPart(dst, "text/plain", m.Text)
		dst = append(dst, "\r\n--"...)
		dst = append(dst, boundary...)
		dst = append(dst, "\r\n"...)
		dst = appendPart(dst, "text/html", m.HTML)
		dst = append(dst, "\r\n--"...)
		dst = append(dst, boundary...)
		dst = append(dst, "--\r\n"...)
	case m.HTML != "":
		dst = appendPart(dst, "text/html", m.HTML)
	default:
		dst = appendPart(dst, "text/plain", m.Text)
	}
	return dst
}

// appendPart appends a part's headers, the blank line and its quoted-printable body.
func appendPart(dst []byte, contentType, body string) []byte {
	dst = append(dst, "Content-Transfer-Encoding: quoted-printable\r\nContent-Type: "...)
	dst = append(dst, contentType...)
	dst = append(dst, "; charset="+mimeCharset+"\r\n\r\n"...)
	return appendQP(dst, body)
}

// appendHeader appends "name: value" CRLF, folded as go-mail folds: the value's
// space-separated words fill lines of under 76 characters; a word that does not
// fit starts a continuation line (CRLF and a space, the space before the break
// dropped); a word longer than a line stays whole.
func appendHeader[V string | []byte](dst []byte, name string, value V) []byte {
	room := mimeMaxHeader - 2 - len(name) - 2
	dst = append(dst, name...)
	dst = append(dst, ':', ' ')
	for first := true; ; first = false {
		word, rest, more := value, value[len(value):], false
		for i := 0; i < len(value); i++ {
			if value[i] == ' ' {
				word, rest, more = value[:i], value[i+1:], true
				break
			}
		}
		if !first {
			dst = append(dst, ' ')
			room--
		}
		if room-len(word) <= 1 {
			if dst[len(dst)-1] == ' ' {
				dst = dst[:len(dst)-1]
			}
			dst = append(dst, "\r\n "...)
			room = mimeMaxHeader - 3
		}
		dst = append(dst, word...)
		room -= len(word)
		if !more {
			break
		}
		value = rest
	}
	return append(dst, '\r', '\n')
}

// fallbackMessageID is the Message-ID of a message that came without one, as
// go-mail made it: random, at this host.
func fallbackMessageID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost.localdomain"
	}
	return rand.Text() + "@" + host
}

// appendAddress appends what net/mail's Address.String returns for name and
// addr: "<addr>" or a quoted name before it, the local part quoted if it needs
// to be. The common case (a dot-atom local part, a printable ASCII name) is
// written here without allocating; the rest is Address.String's.
func appendAddress(dst []byte, name, addr string) []byte {
	at := strings.LastIndexByte(addr, '@')
	if at < 0 || !isDotAtomASCII(addr[:at]) {
		return append(dst, (&netmail.Address{Name: name, Address: addr}).String()...)
	}
	if name != "" {
		for i := 0; i < len(name); i++ {
			if c := name[i]; (c < ' ' || c > '~') && c != '\t' {
				return append(dst, (&netmail.Address{Name: name, Address: addr}).String()...)
			}
		}
		dst = append(dst, '"')
		for i := 0; i < len(name); i++ {
			if c := name[i]; c == '"' || c == '\\' {
				dst = append(dst, '\\')
			}
			dst = append(dst, name[i])
		}
		dst = append(dst, '"', ' ')
	}
	dst = append(dst, '<')
	dst = append(dst, addr...)
	return append(dst, '>')
}

// appendAddressList appends bare addresses as a header's comma-separated list.
func appendAddressList(dst []byte, addrs []string) []byte {
	for i, a := range addrs {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendAddress(dst, "", a)
	}
	return dst
}

// isDotAtomASCII reports whether s is a local part net/mail writes unquoted:
// ASCII atext runs separated by single dots.
func isDotAtomASCII(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if s[i-1] == '.' {
				return false
			}
		case c < '!' || c > '~' || strings.IndexByte("()<>[]:;@\\,\"", c) >= 0:
			return false
		}
	}
	return true
}
