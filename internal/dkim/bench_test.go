package dkim_test

import (
	"strings"
	"testing"

	"github.com/sendonce/sendonce/internal/dkim"
	"github.com/sendonce/sendonce/internal/provider"
)

// BenchmarkSign is the signing cost per message of each algorithm, on a
// campaign-sized message (a 6 KB HTML and text body) as the SMTP provider
// assembles it: go test ./internal/dkim -run '^$' -bench Sign -benchmem.
func BenchmarkSign(b *testing.B) {
	m := message(1)
	m.HTML = strings.Repeat("<p>Our spring sale starts today: twenty per cent off everything.</p>\n", 90)
	m.Text = strings.Repeat("Our spring sale starts today: twenty per cent off everything.\n", 45)
	msg, err := provider.AppendMIME(nil, m)
	if err != nil {
		b.Fatal(err)
	}
	for _, alg := range dkim.Algorithms {
		b.Run(alg, func(b *testing.B) {
			pkcs8, _, err := dkim.Generate(alg)
			if err != nil {
				b.Fatal(err)
			}
			signer, err := dkim.ParsePrivate(pkcs8)
			if err != nil {
				b.Fatal(err)
			}
			k := &dkim.Key{Domain: "news.example.com", Selector: "s1", Signer: signer}
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k.Signature(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
