package report_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/report"
	"github.com/sendonce/sendonce/internal/store"
)

// BenchmarkCampaignReport reads the report of one campaign of
// SENDONCE_REPORT_BENCH_SENDS send rows (default 1,000,000) over 2,000 recipient
// domains, every row sent and its counters as the acknowledgements leave them, a
// fresh service each time so the send status counts are never cached. It reports
// the median latency (ms/median) beside Go's mean, and the median of a recount of
// the send statuses from the rows (ms/stats-median: what /stats did, uncached), which
// neither the report nor /stats does any more:
//
//	bin/sendonce-harness testdb -- go test ./internal/report -run '^$' -bench CampaignReport -benchtime 20x
func BenchmarkCampaignReport(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("SENDONCE_REPORT_BENCH_SENDS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err)
	}
	pool := dbtest.New(b)
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, "bench")
	require.NoError(b, err)
	c, err := campaign.NewService(pool).Create(ctx, acc.ID, campaign.Fields{Name: str("c"), Subject: str("s"),
		FromEmail: str("a@example.com"), TextTemplate: str("hi")})
	require.NoError(b, err)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE campaigns SET status = 'sent', finished_at = now() WHERE id = $1 AND account_id = $2`, []any{c.ID, acc.ID}},
		// Subscriber ids need no subscribers rows: sends has no key to them.
		{`INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status, attempts, sent_at)
		 SELECT $1, $2, g, 'r' || g || '@d' || (g % 2000) || '.example', 'r' || g || '@d' || (g % 2000) || '.example',
		        'campaign:' || $1::bigint || ':' || g, 'sent', 1, now()
		 FROM generate_series(1, $3::int) g`, []any{c.ID, acc.ID, n}},
		{`INSERT INTO campaign_counts (campaign_id, account_id, domain, sent, opened, opened_people)
		 SELECT $1, $2, substring(email_lower FROM '[^@]*$'), count(*), count(*) / 5, count(*) / 10
		 FROM sends WHERE campaign_id = $1 GROUP BY 3`, []any{c.ID, acc.ID}},
		{`INSERT INTO tracked_links (account_id, campaign_id, idx, url) SELECT $2, $1, g, 'https://example.com/' || g
		 FROM generate_series(1, 20) g`, []any{c.ID, acc.ID}},
		{`ANALYZE`, nil},
	} {
		_, err := pool.Exec(ctx, q.sql, q.args...)
		require.NoError(b, err)
	}
	// The send status counts recounted from the rows (CampaignSendCounts), what
	// the report and /stats read before they read the kept status counters: the
	// cost they no longer pay.
	var took, stats []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		_, err := store.New(pool).CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: acc.ID, CampaignID: c.ID})
		stats = append(stats, time.Since(start))
		require.NoError(b, err)
		s := report.NewService(pool, campaign.NewService(pool))
		start = time.Now()
		rep, err := s.Campaign(ctx, acc.ID, c.ID, report.DefaultDomains)
		took = append(took, time.Since(start))
		require.NoError(b, err)
		require.Equal(b, int64(n), rep.Sent)
		require.Equal(b, int64(n), rep.Stats.Counts["sent"])
	}
	b.StopTimer()
	b.ReportMetric(median(took), "ms/median")
	b.ReportMetric(median(stats), "ms/stats-median")
}

func median(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Microseconds()) / 1000
}
