package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/export"
)

// ExportBench is `sendonce bench --export N`: N subscribers imported, then the
// subscriber export streamed as CSV and as NDJSON (to nowhere: the figure is the
// product's reading and writing, not a disk's), each timed, with the process's
// peak resident memory during it (the import's is reset first).
func ExportBench(ctx context.Context, pool *pgxpool.Pool, n int, database string, out io.Writer) error {
	fmt.Fprintf(out, "export bench: %d subscribers, %s\n", n, database)
	accountID, _, imported, err := Seed(ctx, pool, n)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "import: %d rows in %.1fs: %.0f rows/s\n", imported.Rows, imported.Secs, imported.PerSecond())
	svc := export.NewService(pool)
	for _, f := range []export.Format{export.CSV, export.NDJSON} {
		resetPeakRSS()
		cw := &countingWriter{}
		w, err := export.NewWriter(f, cw, export.Columns[export.Subscribers])
		if err != nil {
			return err
		}
		began := time.Now()
		rows, err := svc.Stream(ctx, export.Request{AccountID: accountID, Kind: export.Subscribers,
			Membership: []string{"subscribed"}}, w)
		secs := time.Since(began).Seconds()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "export %-6s %d rows, %.1f MB in %.2fs: %.0f rows/s, peak RSS %.0f MiB\n",
			f, rows, float64(cw.n)/1e6, secs, float64(rows)/secs, peakRSSMB())
	}
	return nil
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
