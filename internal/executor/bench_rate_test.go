package executor

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/provider"
)

// BenchmarkThrottledSend measures a rate-limited send with the production defaults
// (16 workers, batch 20): rows per claim statement, read from the executor's own
// sendonce_claim_batch_size histogram (empty claims included), and the send rate
// the provider saw between its first and last call, against the configured limit.
// Run: go test -run '^$' -bench ThrottledSend -benchtime 1x ./internal/executor
func BenchmarkThrottledSend(b *testing.B) {
	const n = 6000
	for _, limit := range []float64{500, 667} {
		b.Run(fmt.Sprintf("rate=%.0f", limit), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				pool := openPoolB(b, dbtest.URL(b), 4)
				acct := mustInt64(b, pool, `INSERT INTO accounts (name) VALUES ('bench') RETURNING id`)
				mustInt64(b, pool, `WITH ins AS (INSERT INTO subscribers (account_id, email, email_lower, status)
					SELECT $1, 'r' || i || '@example.com', 'r' || i || '@example.com', 'confirmed'
					FROM generate_series(1, $2::int) i RETURNING 1) SELECT count(*) FROM ins`, acct, n)
				c := mustInt64(b, pool, `INSERT INTO campaigns (account_id, name, subject, from_email, text_template,
					status, scheduled_for) VALUES ($1, 'b', 's', 'a@example.com', 'Hi {{.Name}}', 'approved', now())
					RETURNING id`, acct)
				var mu sync.Mutex
				var first, last time.Time
				p := newFake(true)
				p.fail = func(provider.Message, int) error {
					now := time.Now()
					mu.Lock()
					if first.IsZero() {
						first = now
					}
					last = now
					mu.Unlock()
					return nil
				}
				reg := prometheus.NewRegistry()
				e, err := New(pool, p, Config{Tick: time.Hour, RatePerSecond: limit}, nil, reg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.startDue(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				_ = e.Start(context.Background()) // the executor's Start never fails
				for {
					var st string
					if err := pool.QueryRow(context.Background(), `SELECT status FROM campaigns WHERE id = $1`, c).Scan(&st); err != nil {
						b.Fatal(err)
					}
					if st == "sent" {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				b.StopTimer()
				if err := e.Stop(context.Background()); err != nil {
					b.Fatal(err)
				}
				families, err := reg.Gather()
				if err != nil {
					b.Fatal(err)
				}
				for _, f := range families {
					if f.GetName() == "sendonce_claim_batch_size" {
						h := f.GetMetric()[0].GetHistogram()
						b.ReportMetric(float64(h.GetSampleCount()), "claims")
						b.ReportMetric(h.GetSampleSum()/float64(h.GetSampleCount()), "rows/claim")
					}
				}
				b.ReportMetric(float64(n-1)/last.Sub(first).Seconds(), "sends/s")
			}
		})
	}
}
