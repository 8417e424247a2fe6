package provider

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hand-written payload decodes to exactly what encoding/json's encoding of
// HTTPPayload decodes to, for any strings (invalid UTF-8 and control bytes included).
func FuzzAppendPayload(f *testing.F) {
	f.Add("campaign:1:2", "<p>Hi & \"bye\"</p>\n\t\u2028", "Ada\x00\x1f\x7f", "List-Unsubscribe", "<https://x/u/T>")
	f.Add("\xff\xfe", "a\\b", "\u00e9\U0001F600", "", "")
	f.Fuzz(func(t *testing.T, job, html, name, hname, hvalue string) {
		m := Message{JobID: job, MessageID: job + "@x", From: name, FromName: name, ReplyTo: html, To: job,
			ToName: name, Subject: html, HTML: html, Text: name,
			Headers: []Header{{Name: hname, Value: hvalue}, {Name: "X", Value: html}}}
		var got, want HTTPPayload
		require.NoError(t, json.Unmarshal(appendPayload(nil, &m), &got), "%q", appendPayload(nil, &m))
		headers := map[string]string{}
		for _, h := range m.Headers {
			headers[h.Name] = h.Value
		}
		ref, err := json.Marshal(HTTPPayload{JobID: m.JobID, MessageID: m.MessageID, From: m.From, FromName: m.FromName,
			ReplyTo: m.ReplyTo, To: m.To, ToName: m.ToName, Subject: m.Subject, HTML: m.HTML, Text: m.Text, Headers: headers})
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(ref, &want))
		require.Equal(t, want, got)
	})
}

func TestResponseID(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"id":"re_1"}`:                  "re_1",
		`{"id":"","message_id":"m-2"}`:   "m-2",
		`{"message_id":"m-2"}`:           "m-2",
		`{"id":12345678901}`:             "12345678901",
		`{"id":1.5e3}`:                   "1500",
		`{"id":null,"message_id":null}`:  "",
		`{"id":{"nested":1}}`:            "",
		`not json`:                       "",
		`["id"]`:                         "",
		`{"id":"\u00e9t\u00e9","x":[1]}`: "été",
	} {
		require.Equal(t, want, responseID([]byte(body)), body)
	}
}
