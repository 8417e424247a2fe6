package render_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sendonce/sendonce/internal/render"
)

// BenchmarkBuildTracked is the cost click tracking adds to building one message:
// the ~4 KiB newsletter of BenchmarkSend with five literal links, built without
// tracking (off) and with its links rewritten, the honeypot and the open pixel
// added (on). The click URLs are fixed strings here: signing them is the
// tracking package's (one HMAC each).
func BenchmarkBuildTracked(b *testing.B) {
	c := benchCampaign()
	links := ""
	for i := range 5 {
		links += `<p><a href="https://shop.example/p/` + strconv.Itoa(i) + `" style="color:#06c">Product ` + strconv.Itoa(i) + `</a></p>`
	}
	c.HTML = strings.Replace(c.HTML, "</h1>", "</h1>"+links, 1)
	for _, track := range []bool{false, true} {
		name := "off"
		if track {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			c.TrackClicks = track
			p, err := newBuilder(b).Prepare(c)
			if err != nil {
				b.Fatal(err)
			}
			l := render.Links{HTTPS: "https://mail.example.com/u/tok"}
			if track {
				l.Click = func(i int) string {
					return "https://mail.example.com/c/AQJrMQEBAQEBcr9o7eqCWMrJe43H064AUSdaMcv-C_HYlbrfY1bnrCE"
				}
				l.Open = "https://mail.example.com/o/AQJrMQEBAQEBcr9o7eqCWMrJe43H064AUSdaMcv"
			}
			attrs := []byte(`{"plan":"pro"}`)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Build(render.Recipient{JobID: "j", Email: "a@example.com", Name: "Ann", Attributes: attrs}, l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
