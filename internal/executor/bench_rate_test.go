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
	"github.com/sendonce/sendonce/internal/testfactory"
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
				fx := testfactory.New(pool)
				acct := fx.Account(b, "bench").ID
				fx.Subscribers(b, acct, "r", n, "confirmed")
				now := time.Now()
				c := fx.Campaign(b, acct, testfactory.Campaign{Name: "b", Text: "Hi {{.Name}}", Status: "approved",
					ScheduledFor: &now})
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
