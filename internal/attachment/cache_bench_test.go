package attachment_test

import (
	"crypto/rand"
	"crypto/sha256"
	"testing"

	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/provider"
)

// BenchmarkCampaignMessageMIME is the cost per recipient of writing a campaign
// message that carries a 1 MB file: per_message encodes the file for every
// message (what the executor did before the cache), encoded_once shares the
// campaign's encoding through the EncodedCache. The message buffer is reused,
// as the SMTP provider reuses its own.
//
//	go test -run '^$' -bench BenchmarkCampaignMessageMIME -benchmem ./internal/attachment/
func BenchmarkCampaignMessageMIME(b *testing.B) {
	content := make([]byte, 1<<20)
	_, _ = rand.Read(content)
	sum := sha256.Sum256(content)
	files := []provider.Attachment{{Filename: "catalogue.pdf", ContentType: "application/pdf", Content: content, SHA256: sum[:]}}
	m := provider.Message{JobID: "j-1", From: "news@shop.example", To: "ada@example.com", Subject: "Our catalogue",
		HTML: "<p>Hello Ada</p>", Text: "Hello Ada"}
	run := func(b *testing.B, attach func() []provider.Attachment) {
		var buf []byte
		b.ReportAllocs()
		b.SetBytes(int64(len(content)))
		for b.Loop() {
			msg := m
			msg.Attachments = attach()
			var err error
			if buf, err = provider.AppendMIME(buf[:0], msg); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("per_message", func(b *testing.B) { run(b, func() []provider.Attachment { return files }) })
	b.Run("encoded_once", func(b *testing.B) {
		c := attachment.NewEncodedCache(0)
		run(b, func() []provider.Attachment { return c.Attach(42, files) })
	})
}
