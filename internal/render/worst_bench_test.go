package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sendonce/sendonce/internal/render"
)

// BenchmarkWorstTemplate renders templates that pass the save-time check but make a
// recipient's render as expensive as the limits allow, with the largest attributes
// a template is handed (64 KiB). Each stops at a limit or just under it; ns/op and
// B/op are what one recipient can cost the executor.
func BenchmarkWorstTemplate(b *testing.B) {
	half := strings.Repeat("x", render.MaxAttributeBytes/2-16)
	keys := make([]string, 0, 6000)
	for i := range 6000 {
		keys = append(keys, fmt.Sprintf(`"k%04d":1`, i))
	}
	for _, tc := range []struct{ name, tpl, attrs string }{
		// 2 × 32 KiB equal strings compared on every iteration (eq is not charged by size).
		{"eq of large strings in a loop", `{{range 1000}}{{if eq $.Attributes.a $.Attributes.b}}{{end}}{{end}}`,
			`{"a":"` + half + `","b":"` + half + `"}`},
		// The same at the top level, as many times as MaxNodes allows.
		{"eq of large strings unrolled", strings.Repeat(`{{if eq .Attributes.a .Attributes.b}}{{end}}`, render.MaxNodes/6),
			`{"a":"` + half + `","b":"` + half + `"}`},
		// A 6000-key map sorted on every range start.
		{"map sort per range", `{{range 500}}{{with $.Attributes.m}}{{range .}}{{break}}{{end}}{{end}}{{end}}`,
			`{"m":{` + strings.Join(keys, ",") + `}}`},
		// Output up to the HTML part's limit.
		{"512 KiB of output", `{{range 1000}}{{$.Attributes.a}}{{end}}`, `{"a":"` + strings.Repeat("<", 600) + `"}`},
		// printf of large data, charged by the bytes it returns.
		{"printf of large data", `{{range 1000}}{{if printf "%v%v" $.Attributes.a $.Attributes.b}}{{end}}{{end}}`,
			`{"a":"` + half + `","b":"` + half + `"}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if err := render.Validate("s", tc.tpl, ""); err != nil {
				b.Fatalf("the template must be savable: %v", err)
			}
			p, err := newBuilder(b).Prepare(render.Campaign{FromEmail: "n@example.com", Subject: "s", HTML: tc.tpl, Text: "t"})
			if err != nil {
				b.Fatal(err)
			}
			r := render.Recipient{JobID: "campaign:1:2", Email: "a@example.org", Name: "Ada", Attributes: []byte(tc.attrs)}
			_, err = p.Build(r, render.Links{})
			b.Logf("outcome: %v", err)
			b.ReportAllocs()
			for b.Loop() {
				_, _ = p.Build(r, render.Links{})
			}
		})
	}
}
