package complaint_test

import (
	"context"
	"testing"
	"time"

	"github.com/sendonce/sendonce/internal/complaint"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// BenchmarkComplaintRate1M is the guard's delivered-count scan over one route
// with 1,000,000 delivered sends in the window (ten campaigns of 100,000, 0.2 %
// complained about, below the threshold so nothing pauses): rate is the
// ComplaintRate statement alone, first_pass a process's first Guard.Pass (which
// finds the route through its complaints in the window and counts it),
// idle_pass a later pass with no complaint since the one before.
//
//	go test -run '^$' -bench BenchmarkComplaintRate1M -benchtime 10x ./internal/complaint/
func BenchmarkComplaintRate1M(b *testing.B) {
	ctx := context.Background()
	pool := dbtest.New(b)
	now := time.Date(2030, 1, 8, 12, 0, 0, 0, time.UTC)
	fx := testfactory.New(pool)
	acct := fx.Account(b, "a").ID
	sender := fx.Sender(b, acct, "s", "http", false)
	for range 10 {
		started := time.Now()
		c := fx.Campaign(b, acct, testfactory.Campaign{FromEmail: "news@example.com", Text: "hi", Status: "sending",
			StartedAt: &started, SenderID: &sender})
		if _, err := pool.Exec(ctx, `INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status, sent_at,
				via_sender_id, feedback, feedback_at)
			SELECT $1::bigint, $2::bigint, i, 'r' || i || '@example.com', 'r' || i || '@example.com', 'campaign:' || $1::bigint || ':' || i,
			       'sent', $4::timestamptz - interval '2 hours', $3::bigint,
			       CASE WHEN i % 500 = 0 THEN 'complaint' END, CASE WHEN i % 500 = 0 THEN $4::timestamptz - interval '1 hour' END
			FROM generate_series(1, 100000) i`, c, acct, sender, now); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE sends`); err != nil {
		b.Fatal(err)
	}
	since := now.Add(-7 * 24 * time.Hour)
	q := store.New(pool)
	b.Run("rate", func(b *testing.B) {
		for b.Loop() {
			r, err := q.ComplaintRate(ctx, store.ComplaintRateParams{AccountID: acct, SenderKey: sender, Since: since})
			if err != nil || r.Delivered != 1_000_000 || r.Complaints != 2_000 {
				b.Fatal(r, err)
			}
		}
	})
	guard := func() *complaint.Guard {
		return &complaint.Guard{Pool: pool, Max: 0.003, Window: 7 * 24 * time.Hour, MinDelivered: 500, Now: func() time.Time { return now }}
	}
	// A process's first pass looks back a whole window: it counts the route.
	b.Run("first_pass", func(b *testing.B) {
		for b.Loop() {
			paused, err := guard().Pass(ctx)
			if err != nil || len(paused) != 0 {
				b.Fatal(paused, err)
			}
		}
	})
	// Later passes count only routes with a complaint since the last pass: none here.
	b.Run("idle_pass", func(b *testing.B) {
		g := guard()
		for b.Loop() {
			paused, err := g.Pass(ctx)
			if err != nil || len(paused) != 0 {
				b.Fatal(paused, err)
			}
		}
	})
}
