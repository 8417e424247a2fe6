package provider

// qpLineMax is quoted-printable's longest encoded line, CRLF excluded (RFC 2045 §6.7).
const qpLineMax = 76

// qpLiteral marks the bytes written as themselves: printable ASCII except '=',
// space and tab (a space or tab before a line break is encoded instead).
var qpLiteral = func() (t [256]bool) {
	for b := '!'; b <= '~'; b++ {
		t[b] = b != '='
	}
	t[' '], t['\t'] = true, true
	return t
}()

const upperHex = "0123456789ABCDEF"

// appendQP appends s encoded as quoted-printable text, byte for byte what
// mime/quotedprintable.Writer (Binary false) writes for s followed by Close:
// CR, LF and CRLF become CRLF, a space or tab before a line break or at the end
// is encoded, lines are broken softly ("=" CRLF) before 76 characters. The
// stdlib writer takes a Write call and a copy per line; this one appends runs of
// literal bytes at once into the message being assembled. A test compares both
// on random input.
func appendQP(dst []byte, s string) []byte {
	lineStart := len(dst)
	// cr is the stdlib writer's flag of the same name: the last line break was a
	// CR, so an LF right after it (not counting encoded bytes) is its pair.
	cr := false
	softBreak := func() {
		dst = append(dst, '=', '\r', '\n')
		lineStart = len(dst)
	}
	encode := func(b byte) {
		if qpLineMax-1-(len(dst)-lineStart) < 3 {
			softBreak()
		}
		dst = append(dst, '=', upperHex[b>>4], upperHex[b&0x0f])
	}
	// encodeTrailingSpace encodes a space or tab that ends the line.
	encodeTrailingSpace := func() {
		if n := len(dst); n > lineStart && (dst[n-1] == ' ' || dst[n-1] == '\t') {
			b := dst[n-1]
			dst = dst[:n-1]
			encode(b)
		}
	}
	for i := 0; i < len(s); {
		b := s[i]
		switch {
		case qpLiteral[b]:
			// A run of literal bytes, up to the soft break.
			room := qpLineMax - 1 - (len(dst) - lineStart)
			if room == 0 {
				softBreak()
				room = qpLineMax - 1
			}
			j := i + 1
			for j < len(s) && j-i < room && qpLiteral[s[j]] {
				j++
			}
			dst = append(dst, s[i:j]...)
			cr = false
			i = j
			continue
		case b == '\r' || b == '\n':
			if !(cr && b == '\n') {
				cr = b == '\r'
				encodeTrailingSpace()
				dst = append(dst, '\r', '\n')
				lineStart = len(dst)
			} else {
				cr = false
			}
		default:
			encode(b)
		}
		i++
	}
	encodeTrailingSpace()
	return dst
}
