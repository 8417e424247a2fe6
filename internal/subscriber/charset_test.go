package subscriber_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/charmap"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/subscriber"
)

// utf16File encodes s as UTF-16 in order, with a byte order mark when bom is set, as
// Excel's "Unicode text" export does.
func utf16File(s string, order binary.ByteOrder, bom bool) []byte {
	var b bytes.Buffer
	if bom {
		_ = binary.Write(&b, order, uint16(0xFEFF))
	}
	for _, u := range utf16.Encode([]rune(s)) {
		_ = binary.Write(&b, order, u)
	}
	return b.Bytes()
}

// TestParseCSVEncodings reads the same two rows as the files spreadsheets write: a
// Latin-1 / Windows-1252 export (Excel's plain "CSV"), UTF-8 with and without a BOM,
// UTF-16 with a BOM, semicolon-separated (Excel in a comma-decimal locale), each with
// and without a charset parameter.
func TestParseCSVEncodings(t *testing.T) {
	t.Parallel()
	const want = "Zoë Ça€"
	utf8Doc := "email,name\nzoe@example.com," + want + "\n"
	cp1252 := []byte("email,name\nzoe@example.com,Zo\xeb \xc7a\x80\n")
	latin1 := []byte("email;name\r\nzoe@example.com;Zo\xeb \xc7a\x80\r\n")
	for _, tc := range []struct {
		name    string
		doc     []byte
		charset string
	}{
		{"utf-8", []byte(utf8Doc), ""},
		{"utf-8 labelled", []byte(utf8Doc), "UTF-8"},
		{"utf-8 with BOM", append([]byte{0xEF, 0xBB, 0xBF}, utf8Doc...), ""},
		{"utf-8 with BOM labelled latin1", append([]byte{0xEF, 0xBB, 0xBF}, utf8Doc...), "iso-8859-1"},
		{"windows-1252 unlabelled", cp1252, ""},
		{"windows-1252 labelled", cp1252, "windows-1252"},
		{"iso-8859-1 labelled, semicolons, CRLF", latin1, "ISO-8859-1"},
		{"utf-16le with BOM", utf16File(utf8Doc, binary.LittleEndian, true), ""},
		{"utf-16be with BOM", utf16File(utf8Doc, binary.BigEndian, true), ""},
		{"utf-16le labelled, no BOM", utf16File(utf8Doc, binary.LittleEndian, false), "utf-16le"},
		{"utf-16 with BOM, semicolons", utf16File("email;name\r\nzoe@example.com;"+want+"\r\n", binary.LittleEndian, true), "utf-16"},
	} {
		rows, rejected, err := subscriber.ParseCSV(bytes.NewReader(tc.doc), tc.charset)
		require.NoError(t, err, tc.name)
		require.Empty(t, rejected, tc.name)
		require.Len(t, rows, 1, tc.name)
		require.Equal(t, "zoe@example.com", rows[0].Email, tc.name)
		require.Equal(t, want, *rows[0].Name, tc.name)
	}
}

// TestParseCSVRefusesUnstorableCells: a NUL, bytes that are invalid in the declared
// encoding and unpaired UTF-16 surrogates reject their line, naming the column; the
// other lines are read. The CSV's JSON attributes column is held to the same rule.
func TestParseCSVRefusesUnstorableCells(t *testing.T) {
	t.Parallel()
	doc := "email,name,attributes\n" +
		"a@example.com,a\x00b,\n" +
		"b@example.com,caf\xe9,\n" +
		"c@example.com,ok,\"{\"\"k\"\":\"\"\\u0000\"\"}\"\n" +
		"d@example.com,ok,\"{\"\"k\"\":\"\"\\ud800\"\"}\"\n" +
		"e@example.com,fine,\n"
	rows, rejected, err := subscriber.ParseCSV(bytes.NewReader([]byte(doc)), "utf-8")
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, "e@example.com", rows[0].Email)
	require.Len(t, rejected, 4)
	require.Equal(t, 2, rejected[0].Line)
	require.Contains(t, rejected[0].Reason, `"name" contains a NUL`)
	require.Equal(t, 3, rejected[1].Line)
	require.Contains(t, rejected[1].Reason, "not valid UTF-8")
	require.Equal(t, 4, rejected[2].Line)
	require.Contains(t, rejected[2].Reason, "attributes/k contains a NUL")
	require.Equal(t, 5, rejected[3].Line)
	require.Contains(t, rejected[3].Reason, "surrogate")

	// UTF-16 with a lone high surrogate in line 2's name.
	u := utf16File("email,name\nx@example.com,", binary.LittleEndian, true)
	u = binary.LittleEndian.AppendUint16(u, 0xD800)
	u = append(u, utf16File("x\ny@example.com,y\n", binary.LittleEndian, false)...)
	rows, rejected, err = subscriber.ParseCSV(bytes.NewReader(u), "")
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Len(t, rejected, 1)
	require.Equal(t, 2, rejected[0].Line)
	require.Contains(t, rejected[0].Reason, "not valid UTF-16LE")

	// A header that is not text fails the request; an unknown charset is 415.
	_, _, err = subscriber.ParseCSV(bytes.NewReader([]byte("email,na\x00me\n")), "")
	require.True(t, apperr.Is(err, apperr.Invalid), "%v", err)
	_, _, err = subscriber.ParseCSV(bytes.NewReader([]byte("email\n")), "koi8-r")
	require.True(t, apperr.Is(err, apperr.UnsupportedMediaType), "%v", err)
}

// BenchmarkParseCSV reads 100,000 rows in each encoding, the decoding and the
// per-cell text check included (no database):
//
//	go test -run xxx -bench ParseCSV -benchtime 5x ./internal/subscriber/
func BenchmarkParseCSV(b *testing.B) {
	var doc bytes.Buffer
	doc.WriteString("email,name,status,plan\n")
	for i := range 100_000 {
		fmt.Fprintf(&doc, "user%06d@example.com,Zoë %d,confirmed,plan%d\n", i, i, i%7)
	}
	cp1252, err := charmap.Windows1252.NewEncoder().Bytes(doc.Bytes())
	require.NoError(b, err)
	for _, tc := range []struct {
		name string
		doc  []byte
	}{{"utf-8", doc.Bytes()}, {"windows-1252", cp1252}, {"utf-16le-bom", utf16File(doc.String(), binary.LittleEndian, true)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.doc)))
			for b.Loop() {
				rows, _, err := subscriber.ParseCSV(bytes.NewReader(tc.doc), "")
				if err != nil || len(rows) != 100_000 {
					b.Fatal(err, len(rows))
				}
			}
		})
	}
}
