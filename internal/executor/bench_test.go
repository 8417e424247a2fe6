package executor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// BenchmarkDrain measures the executor's own ceiling: one executor draining a
// 50,000-recipient campaign through a provider that accepts at once, so claim,
// render and acknowledge are all that is timed. Compare with DESIGN.md §4's bare
// SQL loop. Run: go test -run '^$' -bench Drain -benchtime 1x ./internal/executor
func BenchmarkDrain(b *testing.B) {
	const n = 50000
	for _, batch := range []int{20, 100, 500} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				url := dbtest.URL(b)
				pool := openPoolB(b, url, 4)
				fx := testfactory.New(pool)
				acct := fx.Account(b, "bench").ID
				fx.Subscribers(b, acct, "r", n, "confirmed")
				now := time.Now()
				c := fx.Campaign(b, acct, testfactory.Campaign{Name: "b", Text: "Hi {{.Name}}", Status: "approved",
					ScheduledFor: &now})
				e, err := New(pool, newFake(true), Config{Tick: time.Hour, Workers: max(64, batch), BatchSize: batch,
					Poll: 10 * time.Millisecond}, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.startDue(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				_ = e.Start(context.Background()) // the executor's Start never fails
				for {
					var st string
					if err := pool.QueryRow(context.Background(), `SELECT status FROM campaigns WHERE id = $1`, c).Scan(&st); err != nil {
						b.Fatal(err)
					}
					if st == "sent" {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				elapsed := time.Since(start)
				b.StopTimer()
				if err := e.Stop(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(n)/elapsed.Seconds(), "rows/s")
			}
		})
	}
}
