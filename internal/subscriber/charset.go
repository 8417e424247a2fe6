package subscriber

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/sendonce/sendonce/internal/apperr"
)

// Encodings of CSV imports. Spreadsheets write UTF-8 with or without a byte order
// mark, UTF-16 with one ("Unicode text"), or the ANSI code page, which for Western
// locales is Windows-1252 (Excel's plain "CSV" there; the WHATWG Encoding
// Standard reads ISO-8859-1 labels as Windows-1252 too).
const (
	EncodingUTF8        = "UTF-8"
	EncodingUTF16LE     = "UTF-16LE"
	EncodingUTF16BE     = "UTF-16BE"
	EncodingWindows1252 = "windows-1252"
	EncodingISO885915   = "ISO-8859-15"
)

// charsetLabels maps the charset labels we accept to an encoding. ISO-8859-1 and
// US-ASCII read as Windows-1252, as the WHATWG Encoding Standard has browsers do:
// files labelled Latin-1 are in practice Windows-1252 (0x80 is €, not a C1 control).
var charsetLabels = map[string]string{
	"utf-8": EncodingUTF8, "utf8": EncodingUTF8, "unicode-1-1-utf-8": EncodingUTF8,
	"utf-16": EncodingUTF16LE, "utf-16le": EncodingUTF16LE, "utf-16be": EncodingUTF16BE, "unicode": EncodingUTF16LE,
	"windows-1252": EncodingWindows1252, "cp1252": EncodingWindows1252, "x-cp1252": EncodingWindows1252,
	"iso-8859-1": EncodingWindows1252, "iso8859-1": EncodingWindows1252, "iso_8859-1": EncodingWindows1252,
	"latin1": EncodingWindows1252, "l1": EncodingWindows1252, "us-ascii": EncodingWindows1252, "ascii": EncodingWindows1252,
	"iso-8859-15": EncodingISO885915, "iso8859-15": EncodingISO885915, "latin9": EncodingISO885915, "l9": EncodingISO885915,
}

// DecodeCSV returns raw as UTF-8 and the encoding it was read in. A byte order mark
// decides first (UTF-8, UTF-16LE, UTF-16BE), then the charset parameter of the
// Content-Type; without either, raw is UTF-8 when it is valid UTF-8 and Windows-1252
// otherwise. An unknown charset is unsupported_media_type. Bytes that are not valid
// in the encoding (invalid UTF-8, unpaired UTF-16 surrogates) are passed on as
// invalid UTF-8, so the line holding them is rejected rather than silently changed.
func DecodeCSV(raw []byte, charset string) ([]byte, string, error) {
	switch {
	case bytes.HasPrefix(raw, []byte{0xEF, 0xBB, 0xBF}):
		return raw[3:], EncodingUTF8, nil
	case bytes.HasPrefix(raw, []byte{0xFF, 0xFE}):
		return decodeUTF16(raw[2:], binary.LittleEndian), EncodingUTF16LE, nil
	case bytes.HasPrefix(raw, []byte{0xFE, 0xFF}):
		return decodeUTF16(raw[2:], binary.BigEndian), EncodingUTF16BE, nil
	}
	enc := ""
	if charset != "" {
		var ok bool
		if enc, ok = charsetLabels[strings.ToLower(strings.TrimSpace(charset))]; !ok {
			return nil, "", apperr.New(apperr.UnsupportedMediaType,
				"charset %q is not supported; send UTF-8, UTF-16 (with a byte order mark), windows-1252 or ISO-8859-1", charset)
		}
	} else if utf8.Valid(raw) {
		enc = EncodingUTF8
	} else {
		enc = EncodingWindows1252
	}
	switch enc {
	case EncodingUTF16LE:
		return decodeUTF16(raw, binary.LittleEndian), enc, nil
	case EncodingUTF16BE:
		return decodeUTF16(raw, binary.BigEndian), enc, nil
	case EncodingWindows1252:
		out, err := charmap.Windows1252.NewDecoder().Bytes(raw)
		return out, enc, err
	case EncodingISO885915:
		out, err := charmap.ISO8859_15.NewDecoder().Bytes(raw)
		return out, enc, err
	}
	return raw, enc, nil
}

// invalidByte stands for a code unit that does not decode: it is never valid UTF-8.
const invalidByte = 0xFF

// decodeUTF16 decodes UTF-16 code units to UTF-8. golang.org/x/text would turn an
// unpaired surrogate or a trailing odd byte into U+FFFD; here they become an invalid
// byte, so the check on each cell refuses the line instead of storing a guess.
func decodeUTF16(raw []byte, order binary.ByteOrder) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i+1 < len(raw); i += 2 {
		u := order.Uint16(raw[i:])
		switch {
		case utf16.IsSurrogate(rune(u)) && u < 0xDC00 && i+3 < len(raw):
			lo := order.Uint16(raw[i+2:])
			if r := utf16.DecodeRune(rune(u), rune(lo)); r != utf8.RuneError {
				out = utf8.AppendRune(out, r)
				i += 2
				continue
			}
			out = append(out, invalidByte)
		case utf16.IsSurrogate(rune(u)):
			out = append(out, invalidByte)
		default:
			out = utf8.AppendRune(out, rune(u))
		}
	}
	if len(raw)%2 == 1 {
		out = append(out, invalidByte)
	}
	return out
}

// sniffDelimiter picks the field separator from the header line: a semicolon when
// it has more semicolons than commas outside quotes (Excel in locales whose decimal
// separator is a comma), else a comma.
func sniffDelimiter(doc []byte) rune {
	commas, semicolons, quoted := 0, 0, false
	for _, c := range doc {
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '\n':
			if semicolons > commas {
				return ';'
			}
			return ','
		case c == ',':
			commas++
		case c == ';':
			semicolons++
		}
	}
	if semicolons > commas {
		return ';'
	}
	return ','
}
