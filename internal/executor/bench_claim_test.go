package executor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// The hot path's two statements on real PostgreSQL, one operation = one statement
// over one batch. rows/s is the figure to compare with DESIGN.md §4; no timing is
// asserted. Run with e.g. `go test ./internal/executor -run '^$' -bench . -benchtime 200x`
// (the setup inserts b.N × batch recipients, so bound b.N).

var benchBatches = []int{20, 100, 500}

// benchCampaign inserts an approved campaign to rows confirmed recipients, starts
// it with the scheduler's build (a queued send row each) and returns its id.
func benchCampaign(b *testing.B, pool *pgxpool.Pool, rows int) int64 {
	b.Helper()
	ctx := context.Background()
	var acct, id int64
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	fx := testfactory.New(pool)
	acct = fx.Account(b, "bench").ID
	now := time.Now()
	id = fx.Campaign(b, acct, testfactory.Campaign{Name: "bench", Subject: "Hello", FromEmail: "news@example.com",
		Text: "Hi {{.Name}}", Status: "approved", ScheduledFor: &now, ApprovedAt: &now})
	fx.BulkSubscribers(b, acct, testfactory.Bulk{Prefix: "b", N: rows, Name: "Sub ", NumberName: true,
		Statuses: []string{"confirmed"}})
	_, started, err := StartCampaign(ctx, pool, id, nil)
	must(err)
	if !started {
		b.Fatal("the campaign did not start")
	}
	_, err = pool.Exec(ctx, `VACUUM ANALYZE subscribers, sends`)
	must(err)
	return id
}

var benchLease = pgtype.Interval{Microseconds: (2 * time.Minute).Microseconds(), Valid: true}

func BenchmarkClaim(b *testing.B) {
	for _, batch := range benchBatches {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			pool := dbtest.New(b)
			id := benchCampaign(b, pool, b.N*batch)
			q := store.New(pool)
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				rows, err := q.SendClaimBatch(ctx, store.SendClaimBatchParams{Lease: benchLease, CampaignID: id, N: int32(batch)})
				if err != nil || len(rows) != batch {
					b.Fatalf("claim: %d rows, %v", len(rows), err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func BenchmarkAcknowledge(b *testing.B) {
	for _, batch := range benchBatches {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			pool := dbtest.New(b)
			id := benchCampaign(b, pool, b.N*batch)
			q := store.New(pool)
			ctx := context.Background()
			acks := make([]store.SendAckManyParams, 0, b.N)
			for range b.N {
				rows, err := q.SendClaimBatch(ctx, store.SendClaimBatchParams{Lease: benchLease, CampaignID: id, N: int32(batch)})
				if err != nil || len(rows) != batch {
					b.Fatalf("claim: %d rows, %v", len(rows), err)
				}
				var p store.SendAckManyParams
				for _, r := range rows {
					p.Ids = append(p.Ids, r.ID)
					p.Attempts = append(p.Attempts, r.Attempts) // the claim's fence
					p.Doubts = append(p.Doubts, false)
					p.Statuses = append(p.Statuses, "sent")
					p.ProviderIds = append(p.ProviderIds, "pid-"+r.JobID)
					p.Errors = append(p.Errors, "")
					p.RetryInUs = append(p.RetryInUs, 0)
				}
				acks = append(acks, p)
			}
			b.ResetTimer()
			for i := range b.N {
				n, err := q.SendAckMany(ctx, acks[i])
				if err != nil || n != int64(batch) {
					b.Fatalf("ack: %d rows, %v", n, err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
