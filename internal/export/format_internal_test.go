package export

import (
	"bufio"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The NDJSON writer's own escaping writes what encoding/json writes, byte for byte.
func TestAppendJSONStringIsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `a "quote" and \ backslash`, "tab\there\nnew\rcr", "\x00\x01\x1f\x7f",
		"<script>&amp;</script>", "é ü 日本 🙂", "line\u2028sep\u2029para", "bad \xff utf-8 \xc3", "=1+2"} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendJSONString(nil, s)), "%q", s)
	}
}

// Every value kind of the exports' rows is written as encoding/json writes it,
// in CSV as the cell text.
func TestWriterValues(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 6, 10, 0, 0, 123000000, time.FixedZone("x", 3600))
	str, num := "x,\"y\"", int64(-5)
	values := []any{nil, "s", &str, (*string)(nil), int64(7), &num, (*int64)(nil), int32(3), true, at, &at, (*time.Time)(nil),
		json.RawMessage(`{"a":1}`), []string{"t1", "t2"}}
	var b []byte
	w := &ndjsonWriter{}
	for _, v := range values {
		var out jsonBuf
		w.w = out.writer()
		require.NoError(t, w.writeJSON(v))
		require.NoError(t, w.w.Flush())
		want, err := json.Marshal(v)
		require.NoError(t, err)
		if tm, ok := v.(time.Time); ok {
			want, _ = json.Marshal(tm.UTC().Format(time.RFC3339Nano))
		}
		if tm, ok := v.(*time.Time); ok && tm != nil {
			want, _ = json.Marshal(tm.UTC().Format(time.RFC3339Nano))
		}
		require.Equal(t, string(want), out.String(), "%#v", v)
		b = appendCell(b[:0], v)
		require.Equal(t, cell(v), string(b), "%#v", v)
	}
}

type jsonBuf struct{ b []byte }

func (j *jsonBuf) Write(p []byte) (int, error) { j.b = append(j.b, p...); return len(p), nil }
func (j *jsonBuf) String() string              { return string(j.b) }
func (j *jsonBuf) writer() *bufio.Writer       { return bufio.NewWriter(j) }
