package provider

import "encoding/base64"

// Encoded is a file's content in base64, in the lines of at most 76 characters,
// each ending in CRLF, that a MIME body carries (RFC 2045 §6.8). It is made
// once (EncodeAttachment) and only read afterwards, so every message of a
// campaign can share it: a JSON API's one-line base64 is the same lines without
// their line ends.
type Encoded struct {
	lines []byte
}

// EncodeAttachment encodes content once for sharing.
func EncodeAttachment(content []byte) *Encoded {
	return &Encoded{lines: appendBase64Lines(make([]byte, 0, encodedLinesLen(len(content))), content)}
}

// Size is the bytes the encoding holds.
func (e *Encoded) Size() int { return len(e.lines) }

// encodedLinesLen is the length of n bytes in base64 lines.
func encodedLinesLen(n int) int {
	const raw = base64Line / 4 * 3
	full := n / raw
	l := full * (base64Line + 2)
	if rest := n - full*raw; rest > 0 {
		l += base64.StdEncoding.EncodedLen(rest) + 2
	}
	return l
}

// appendBase64Lines appends content in base64 lines.
func appendBase64Lines(dst, content []byte) []byte {
	enc := base64.StdEncoding
	const raw = base64Line / 4 * 3
	for c := content; len(c) > 0; {
		n := min(len(c), raw)
		dst = enc.AppendEncode(dst, c[:n])
		dst = append(dst, "\r\n"...)
		c = c[n:]
	}
	return dst
}

// appendMIMEBase64 appends a's content as a MIME base64 body: the shared
// encoding when there is one.
func appendMIMEBase64(dst []byte, a Attachment) []byte {
	if a.Encoded != nil {
		return append(dst, a.Encoded.lines...)
	}
	return appendBase64Lines(dst, a.Content)
}

// appendBase64 appends a's content as one line of standard base64: the shared
// encoding's lines without their line ends when there is one.
func appendBase64(dst []byte, a Attachment) []byte {
	if a.Encoded == nil {
		return base64.StdEncoding.AppendEncode(dst, a.Content)
	}
	for l := a.Encoded.lines; len(l) > 0; {
		n := min(len(l), base64Line+2)
		dst = append(dst, l[:n-2]...)
		l = l[n:]
	}
	return dst
}
