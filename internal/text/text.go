// Package text decides which client strings may reach the database: valid UTF-8
// without NUL. PostgreSQL refuses both in text columns (22021) and NUL in jsonb
// (22P05), so every string from outside is checked here first and refused with the
// field it came from, instead of failing later as a database error.
//
// Decoded Go strings are checked with Check. JSON is checked on its raw bytes with
// CheckJSON, because encoding/json silently turns invalid UTF-8 and unpaired UTF-16
// surrogates (`"\ud800"`) into U+FFFD: only the raw text shows what the client sent.
package text

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The reasons a string is refused.
const (
	ReasonNUL       = "contains a NUL character (\\u0000)"
	ReasonUTF8      = "is not valid UTF-8"
	ReasonSurrogate = "contains an unpaired UTF-16 surrogate escape"
)

// Check returns why s may not be stored, or "" when it may.
func Check(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		return ReasonNUL
	}
	if !utf8.ValidString(s) {
		return ReasonUTF8
	}
	return ""
}

// Valid reports whether s may be stored.
func Valid(s string) bool { return Check(s) == "" }

// Printable returns s with invalid bytes and NUL replaced by U+FFFD, so a refused
// string can still be named in an answer.
func Printable(s string) string {
	if Valid(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// Problem is one refused string of a JSON document.
type Problem struct {
	// Pointer is the RFC 6901 JSON pointer of the string; for a refused object key,
	// the pointer of the member the key names.
	Pointer string
	Reason  string
}

// maxProblems bounds how many problems CheckJSON reports for one document.
const maxProblems = 20

// CheckJSON scans the raw JSON document doc and returns every string (member names
// included) that is not valid UTF-8, contains NUL (raw or as \u0000) or contains an
// unpaired surrogate escape, each with its JSON pointer. It reads only as much
// structure as the pointers need: a syntax error ends the scan silently, for the JSON
// decoder that runs next to report.
func CheckJSON(doc []byte) []Problem {
	s := scanner{doc: doc}
	s.run()
	return s.problems
}

// frame is one open object or array on the path to the current value.
type frame struct {
	object    bool
	expectKey bool
	// key is the raw literal of the current member name, decoded only when a
	// pointer needs it.
	key   []byte
	index int
}

type scanner struct {
	doc      []byte
	stack    []frame
	problems []Problem
}

func (s *scanner) run() {
	for i := 0; i < len(s.doc) && len(s.problems) < maxProblems; {
		switch c := s.doc[i]; c {
		case ' ', '\t', '\n', '\r':
			i++
		case '{', '[':
			s.stack = append(s.stack, frame{object: c == '{', expectKey: c == '{'})
			i++
		case '}', ']':
			if len(s.stack) == 0 {
				return
			}
			s.stack = s.stack[:len(s.stack)-1]
			i++
		case ',':
			if len(s.stack) == 0 {
				return
			}
			top := &s.stack[len(s.stack)-1]
			if top.object {
				top.expectKey = true
			} else {
				top.index++
			}
			i++
		case ':':
			if len(s.stack) == 0 || !s.stack[len(s.stack)-1].object {
				return
			}
			s.stack[len(s.stack)-1].expectKey = false
			i++
		case '"':
			end, reason, ok := literal(s.doc, i)
			if !ok {
				return
			}
			isKey := len(s.stack) > 0 && s.stack[len(s.stack)-1].object && s.stack[len(s.stack)-1].expectKey
			if isKey {
				s.stack[len(s.stack)-1].key = s.doc[i:end]
			}
			if reason != "" {
				s.problems = append(s.problems, Problem{Pointer: s.pointer(), Reason: reason})
			}
			i = end
		default:
			// A number, true, false or null: skip to the next delimiter.
			for ; i < len(s.doc); i++ {
				c := s.doc[i]
				if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':' || c == ']' || c == '}' {
					break
				}
				if c == '"' || c == '{' || c == '[' {
					return
				}
			}
		}
	}
}

// pointer is the JSON pointer of the value (or member name) being read.
func (s *scanner) pointer() string {
	var b strings.Builder
	for _, f := range s.stack {
		b.WriteByte('/')
		if f.object {
			b.WriteString(EscapePointer(lossy(f.key)))
		} else {
			b.WriteString(strconv.Itoa(f.index))
		}
	}
	return b.String()
}

// EscapePointer escapes one reference token of a JSON pointer (RFC 6901 §3).
func EscapePointer(tok string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

// literal reads the string literal starting at doc[start] (a quote). It returns the
// index after the closing quote, why the string is refused ("" if it is not), and
// false when the literal does not end (a syntax error for the decoder to report).
func literal(doc []byte, start int) (end int, reason string, ok bool) {
	for i := start + 1; i < len(doc); {
		c := doc[i]
		if c > 0x1f && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++ // the common case: printable ASCII
			continue
		}
		switch {
		case c == '"':
			return i + 1, reason, true
		case c == '\\':
			if i+1 >= len(doc) {
				return 0, "", false
			}
			if doc[i+1] != 'u' {
				i += 2
				continue
			}
			r, ok := hex4(doc, i+2)
			if !ok {
				return 0, "", false
			}
			i += 6
			switch {
			case r == 0:
				reason = firstOf(reason, ReasonNUL)
			case r >= 0xD800 && r < 0xDC00:
				// A high surrogate must be followed by a low one.
				if i+1 < len(doc) && doc[i] == '\\' && doc[i+1] == 'u' {
					if lo, ok := hex4(doc, i+2); ok && lo >= 0xDC00 && lo < 0xE000 {
						i += 6
						continue
					}
				}
				reason = firstOf(reason, ReasonSurrogate)
			case r >= 0xDC00 && r < 0xE000:
				reason = firstOf(reason, ReasonSurrogate)
			}
		case c < utf8.RuneSelf:
			if c == 0 {
				reason = firstOf(reason, ReasonNUL)
			}
			i++
		default:
			r, size := utf8.DecodeRune(doc[i:])
			if r == utf8.RuneError && size <= 1 {
				reason = firstOf(reason, ReasonUTF8)
			}
			i += size
		}
	}
	return 0, "", false
}

func firstOf(have, next string) string {
	if have != "" {
		return have
	}
	return next
}

func hex4(doc []byte, at int) (rune, bool) {
	if at+4 > len(doc) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(doc[at:at+4]), 16, 32)
	return rune(n), err == nil
}

// lossy decodes a string literal for use in a pointer, replacing what cannot be
// decoded, so a refused member name can still be named.
func lossy(lit []byte) string {
	if len(lit) < 2 {
		return "" // an object whose first member name has not been read yet
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return Printable(string(lit[1 : len(lit)-1]))
	}
	return Printable(s)
}

// IsBidiControl reports whether r is a bidirectional formatting character: Unicode's
// Bidi_Control property (UAX #9) — the marks U+061C, U+200E, U+200F, the embeddings
// and overrides U+202A–U+202E and the isolates U+2066–U+2069. Each changes how the
// text around it is displayed without showing itself ("invoice\u202Efdp.exe" reads
// as "invoiceexe.pdf"), so a field that refuses such characters refuses all of them,
// by this one definition.
func IsBidiControl(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }

// HasBidiControl reports whether s holds a bidirectional formatting character
// (IsBidiControl).
func HasBidiControl(s string) bool { return strings.IndexFunc(s, IsBidiControl) >= 0 }
