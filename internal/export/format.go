package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// Format is how rows are written.
type Format string

// The formats: CSV (RFC 4180, UTF-8, a header line) and NDJSON (one JSON object a line).
const (
	CSV    Format = "csv"
	NDJSON Format = "ndjson"
)

// ContentType is the media type of f.
func (f Format) ContentType() string {
	if f == CSV {
		return "text/csv; charset=utf-8"
	}
	return "application/x-ndjson"
}

// Writer writes one export's rows in a format, buffered.
type Writer interface {
	Row(values []any) error
	Flush() error
}

// NewWriter returns a Writer of format f for the columns, writing to w (CSV writes
// the header line first).
func NewWriter(f Format, w io.Writer, columns []string) (Writer, error) {
	b := bufio.NewWriterSize(w, 64<<10)
	if f == CSV {
		cw := &csvWriter{w: b}
		cw.line(columns)
		return cw, nil
	}
	keys := make([][]byte, len(columns))
	for i, c := range columns {
		k, _ := json.Marshal(c)
		keys[i] = k
	}
	return &ndjsonWriter{w: b, keys: keys}, nil
}

// csvWriter writes RFC 4180: fields separated by commas, lines ended by CRLF, a
// field holding a comma, a quote, CR or LF quoted with its quotes doubled.
// (encoding/csv drops a lone CR inside a field when it ends lines with CRLF.)
type csvWriter struct {
	w   *bufio.Writer
	buf []byte
}

func (c *csvWriter) line(cells []string) {
	for i, f := range cells {
		if i > 0 {
			c.w.WriteByte(',')
		}
		c.field([]byte(f))
	}
	c.w.WriteString("\r\n")
}

// field writes one cell, quoted when it holds a comma, a quote, CR or LF.
func (c *csvWriter) field(f []byte) {
	if !bytes.ContainsAny(f, ",\"\r\n") {
		c.w.Write(f)
		return
	}
	c.w.WriteByte('"')
	for {
		i := bytes.IndexByte(f, '"')
		if i < 0 {
			break
		}
		c.w.Write(f[:i+1])
		c.w.WriteByte('"')
		f = f[i+1:]
	}
	c.w.Write(f)
	c.w.WriteByte('"')
}

// Row writes one line, each value's text formula-safe (SafeCell), with one
// scratch buffer for the whole file: no allocation per cell.
func (c *csvWriter) Row(values []any) error {
	for i, v := range values {
		if i > 0 {
			c.w.WriteByte(',')
		}
		c.buf = appendCell(c.buf[:0], v)
		if len(c.buf) > 0 && unsafeLead(c.buf[0]) {
			c.buf = append(c.buf, 0)
			copy(c.buf[1:], c.buf)
			c.buf[0] = '\''
		}
		c.field(c.buf)
	}
	c.w.WriteString("\r\n")
	return nil
}

func (c *csvWriter) Flush() error { return c.w.Flush() }

// SafeCell defuses a cell a spreadsheet would run as a formula (OWASP, "CSV
// Injection"): one that starts with =, +, -, @, a tab or a carriage return gets a
// leading apostrophe, which spreadsheets show as text and do not display.
func SafeCell(s string) string {
	if s != "" && unsafeLead(s[0]) {
		return "'" + s
	}
	return s
}

// unsafeLead says whether a cell starting with b is one SafeCell defuses.
func unsafeLead(b byte) bool {
	switch b {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// appendCell appends the text of v in a CSV cell (see cell) to dst.
func appendCell(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return dst
	case string:
		return append(dst, x...)
	case *string:
		if x == nil {
			return dst
		}
		return append(dst, *x...)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case *int64:
		if x == nil {
			return dst
		}
		return strconv.AppendInt(dst, *x, 10)
	case int32:
		return strconv.AppendInt(dst, int64(x), 10)
	case bool:
		return strconv.AppendBool(dst, x)
	case time.Time:
		return x.UTC().AppendFormat(dst, time.RFC3339Nano)
	case *time.Time:
		if x == nil {
			return dst
		}
		return x.UTC().AppendFormat(dst, time.RFC3339Nano)
	case json.RawMessage:
		return append(dst, x...)
	}
	return append(dst, cell(v)...)
}

// cell is the text of a value in a CSV cell: JSON for objects and arrays, RFC
// 3339 for times, nothing for null.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case *string:
		if x == nil {
			return ""
		}
		return *x
	case int64:
		return strconv.FormatInt(x, 10)
	case *int64:
		if x == nil {
			return ""
		}
		return strconv.FormatInt(*x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case *time.Time:
		if x == nil {
			return ""
		}
		return x.UTC().Format(time.RFC3339Nano)
	case json.RawMessage:
		return string(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}

type ndjsonWriter struct {
	w    *bufio.Writer
	keys [][]byte
	buf  []byte
}

func (n *ndjsonWriter) Row(values []any) error {
	n.w.WriteByte('{')
	for i, v := range values {
		if i > 0 {
			n.w.WriteByte(',')
		}
		n.w.Write(n.keys[i])
		n.w.WriteByte(':')
		if err := n.writeJSON(v); err != nil {
			return err
		}
	}
	n.w.WriteString("}\n")
	return nil
}

func (n *ndjsonWriter) writeJSON(v any) error {
	w := n.w
	switch x := v.(type) {
	case nil:
		w.WriteString("null")
		return nil
	case int64:
		n.buf = strconv.AppendInt(n.buf[:0], x, 10)
	case *int64:
		if x == nil {
			w.WriteString("null")
			return nil
		}
		n.buf = strconv.AppendInt(n.buf[:0], *x, 10)
	case int32:
		n.buf = strconv.AppendInt(n.buf[:0], int64(x), 10)
	case bool:
		n.buf = strconv.AppendBool(n.buf[:0], x)
	case json.RawMessage:
		if x == nil {
			w.WriteString("null")
			return nil
		}
		w.Write(x)
		return nil
	case time.Time:
		n.buf = appendTime(n.buf[:0], x)
	case *time.Time:
		if x == nil {
			w.WriteString("null")
			return nil
		}
		n.buf = appendTime(n.buf[:0], *x)
	case string:
		n.buf = appendJSONString(n.buf[:0], x)
	case *string:
		if x == nil {
			w.WriteString("null")
			return nil
		}
		n.buf = appendJSONString(n.buf[:0], *x)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	_, err := w.Write(n.buf)
	return err
}

func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaped as encoding/json escapes
// it (control characters, <, > and &, U+2028 and U+2029; invalid UTF-8 becomes
// U+FFFD), without its reflection and allocation per value.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func (n *ndjsonWriter) Flush() error { return n.w.Flush() }
