package executor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sendonce/sendonce/internal/dbtest"
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
				acct := mustInt64(b, pool, `INSERT INTO accounts (name) VALUES ('bench') RETURNING id`)
				mustInt64(b, pool, `WITH ins AS (INSERT INTO subscribers (account_id, email, email_lower, status)
					SELECT $1, 'r' || i || '@example.com', 'r' || i || '@example.com', 'confirmed'
					FROM generate_series(1, $2::int) i RETURNING 1) SELECT count(*) FROM ins`, acct, n)
				c := mustInt64(b, pool, `INSERT INTO campaigns (account_id, name, subject, from_email, text_template,
					status, scheduled_for) VALUES ($1, 'b', 's', 'a@example.com', 'Hi {{.Name}}', 'approved', now())
					RETURNING id`, acct)
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
