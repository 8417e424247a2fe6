package provider

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// appendPayload appends m as the JSON object HTTPPayload describes, field for
// field, without reflection and without encoding/json's HTML escaping (which turns
// every '<' of an HTML body into six bytes). Headers keep their order; a repeated
// name keeps its last value, as the decoded map would.
func appendPayload(b []byte, m *Message) []byte {
	for _, f := range [...]struct{ key, value string }{
		{`{"job_id":`, m.JobID}, {`,"message_id":`, m.MessageID}, {`,"from":`, m.From},
		{`,"from_name":`, m.FromName}, {`,"reply_to":`, m.ReplyTo}, {`,"to":`, m.To},
		{`,"to_name":`, m.ToName}, {`,"subject":`, m.Subject}, {`,"html":`, m.HTML}, {`,"text":`, m.Text},
	} {
		b = append(b, f.key...)
		b = appendString(b, f.value)
	}
	b = append(b, `,"headers":{`...)
	for i, h := range m.Headers {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, h.Name)
		b = append(b, ':')
		b = appendString(b, h.Value)
	}
	b = append(b, '}')
	for _, f := range [...]struct {
		key   string
		addrs []string
	}{{`,"reply_to_list":[`, m.MoreReplyTo}, {`,"cc":[`, m.Cc}, {`,"bcc":[`, m.Bcc}} {
		if len(f.addrs) == 0 {
			continue
		}
		if f.key == `,"reply_to_list":[` { // every Reply-To, the first included
			f.addrs = m.ReplyToAll()
		}
		b = append(b, f.key...)
		for i, a := range f.addrs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, a)
		}
		b = append(b, ']')
	}
	if len(m.Attachments) > 0 {
		b = append(b, `,"attachments":[`...)
		for i, a := range m.Attachments {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"filename":`...)
			b = appendString(b, a.Filename)
			b = append(b, `,"content":"`...)
			b = appendBase64(b, a)
			b = append(b, `","content_type":`...)
			b = appendString(b, a.ContentType)
			if a.ContentID != "" {
				b = append(b, `,"content_id":`...)
				b = appendString(b, a.ContentID)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string: '"', '\\' and control characters
// escaped, invalid UTF-8 replaced by U+FFFD (as encoding/json does), U+2028 and
// U+2029 escaped so the body is also valid JavaScript.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// httpAnswer is the part of a 2xx response body the provider reads.
type httpAnswer struct {
	ID        json.RawMessage `json:"id"`
	MessageID json.RawMessage `json:"message_id"`
}

// responseID picks `id`, else `message_id`, from a JSON object body: a non-empty
// string, or a number written as strconv.FormatFloat(v, 'f', -1, 64) writes it.
func responseID(data []byte) string {
	var a httpAnswer
	if json.Unmarshal(data, &a) != nil {
		return ""
	}
	for _, raw := range []json.RawMessage{a.ID, a.MessageID} {
		if len(raw) == 0 {
			continue
		}
		switch raw[0] {
		case '"':
			var s string
			if json.Unmarshal(raw, &s) == nil && s != "" {
				return s
			}
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
				return strconv.FormatFloat(f, 'f', -1, 64)
			}
		}
	}
	return ""
}
