package provider

import (
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// A shared encoding writes exactly the bytes encoding the content per message
// writes: in a MIME part (lines of 76 characters and CRLF) and in the HTTP
// sender's JSON (one line), for every length around a line's end.
func TestEncodedAttachmentSameBytes(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 3, 56, 57, 58, 113, 114, 115, 1000, 57 * 40, 1 << 20} {
		content := make([]byte, n)
		_, _ = rand.Read(content)
		plain := Attachment{Filename: "f.bin", ContentType: "application/octet-stream", Content: content}
		shared := plain
		shared.Encoded = EncodeAttachment(content)
		require.Equal(t, encodedLinesLen(n), shared.Encoded.Size(), "n=%d", n)
		require.Equal(t, appendAttachmentPart(nil, plain, "attachment"), appendAttachmentPart(nil, shared, "attachment"), "n=%d", n)
		m := Message{JobID: "j", From: "a@example.com", To: "b@example.com", Subject: "s", Text: "t", Attachments: []Attachment{plain}}
		ms := m
		ms.Attachments = []Attachment{shared}
		require.Equal(t, string(appendPayload(nil, &m)), string(appendPayload(nil, &ms)), "n=%d", n)
	}
}
