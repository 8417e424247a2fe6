package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
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
	w *bufio.Writer
}

func (c *csvWriter) line(cells []string) {
	for i, f := range cells {
		if i > 0 {
			c.w.WriteByte(',')
		}
		if !strings.ContainsAny(f, ",\"\r\n") {
			c.w.WriteString(f)
			continue
		}
		c.w.WriteByte('"')
		c.w.WriteString(strings.ReplaceAll(f, `"`, `""`))
		c.w.WriteByte('"')
	}
	c.w.WriteString("\r\n")
}

func (c *csvWriter) Row(values []any) error {
	cells := make([]string, len(values))
	for i, v := range values {
		cells[i] = SafeCell(cell(v))
	}
	c.line(cells)
	return nil
}

func (c *csvWriter) Flush() error { return c.w.Flush() }

// SafeCell defuses a cell a spreadsheet would run as a formula (OWASP, "CSV
// Injection"): one that starts with =, +, -, @, a tab or a carriage return gets a
// leading apostrophe, which spreadsheets show as text and do not display.
func SafeCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
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
}

func (n *ndjsonWriter) Row(values []any) error {
	n.w.WriteByte('{')
	for i, v := range values {
		if i > 0 {
			n.w.WriteByte(',')
		}
		n.w.Write(n.keys[i])
		n.w.WriteByte(':')
		if err := writeJSON(n.w, v); err != nil {
			return err
		}
	}
	n.w.WriteString("}\n")
	return nil
}

func writeJSON(w *bufio.Writer, v any) error {
	switch x := v.(type) {
	case int64:
		w.WriteString(strconv.FormatInt(x, 10))
		return nil
	case json.RawMessage:
		w.Write(x)
		return nil
	case time.Time:
		w.WriteByte('"')
		w.WriteString(x.UTC().Format(time.RFC3339Nano))
		w.WriteByte('"')
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func (n *ndjsonWriter) Flush() error { return n.w.Flush() }
