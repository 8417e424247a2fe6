package export_test

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/sendonce/sendonce/internal/export"
)

// BenchmarkWriter is the Go side of a subscriber export row by row (no database):
// go test ./internal/export -run '^$' -bench Writer -benchmem.
func BenchmarkWriter(b *testing.B) {
	name := "Subscriber 123456"
	at := time.Date(2026, 12, 6, 10, 0, 0, 123456000, time.UTC)
	row := []any{int64(123456), "user0123456@example.com", &name, "confirmed", json.RawMessage(`{"plan": "pro"}`), at, at}
	for _, f := range []export.Format{export.CSV, export.NDJSON} {
		b.Run(string(f), func(b *testing.B) {
			w, err := export.NewWriter(f, io.Discard, export.Columns[export.Subscribers])
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := w.Row(row); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
