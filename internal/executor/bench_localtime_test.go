package executor

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// BenchmarkLocalTimeBuild measures what deliver_at_local costs the build: each
// iteration builds the same audience twice, alternating, once as a plain
// campaign and once with deliver_at_local (sendonce_local_due per row), and
// reports the cost per recipient of each and their ratio. The audience
// (SENDONCE_BENCH_LOCAL_ROWS, default 20,000) is a quarter each in three valid
// zones, an eighth with an unknown zone and an eighth with none.
//
//	bin/sendonce-harness testdb -- go test ./internal/executor -run '^$' -bench LocalTimeBuild -benchtime 5x -v
func BenchmarkLocalTimeBuild(b *testing.B) {
	rows := 20_000
	if v, err := strconv.Atoi(os.Getenv("SENDONCE_BENCH_LOCAL_ROWS")); err == nil && v > 0 {
		rows = v
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dbtest.URL(b))
	require.NoError(b, err)
	b.Cleanup(pool.Close)
	fx := testfactory.New(pool)
	acct := fx.Account(b, "a").ID
	paris := "Europe/Paris"
	_, err = store.New(pool).AccountUpdateSettings(ctx, store.AccountUpdateSettingsParams{AccountID: acct, TimeZone: &paris})
	require.NoError(b, err)
	zone := func(z string) json.RawMessage { return json.RawMessage(`{"timezone": "` + z + `"}`) }
	// The i-th subscriber's zone is zones[(i-1) % 8]: i % 8 = 1 Mars, 2-3 Tokyo, 4-5 Berlin, 6-7 New York, 0 none.
	zones := []json.RawMessage{zone("Mars/Olympus"), zone("Asia/Tokyo"), zone("Asia/Tokyo"), zone("Europe/Berlin"),
		zone("Europe/Berlin"), zone("America/New_York"), zone("America/New_York"), json.RawMessage(`{}`)}
	fx.BulkSubscribers(b, acct, testfactory.Bulk{Prefix: "s", N: rows, Statuses: []string{"confirmed"}, Attributes: zones})
	_, err = pool.Exec(ctx, `ANALYZE subscribers`)
	require.NoError(b, err)
	e, err := New(pool, newFake(true), Config{}, nil, nil)
	require.NoError(b, err)
	build := func(local bool) time.Duration {
		at := ""
		if local {
			at = "09:00"
		}
		scheduled, now := time.Now().Add(-time.Minute), time.Now()
		id := fx.Campaign(b, acct, testfactory.Campaign{FromEmail: "news@example.com", Text: "t", Status: "approved",
			ScheduledFor: &scheduled, ApprovedAt: &now, DeliverAtLocal: at})
		t0 := time.Now()
		ok, err := e.startCampaign(ctx, id)
		d := time.Since(t0)
		require.NoError(b, err)
		require.True(b, ok)
		var n, due int64
		require.NoError(b, pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE next_attempt_at > now())
			FROM sends WHERE campaign_id = $1`, id).Scan(&n, &due))
		require.Equal(b, int64(rows), n)
		if local {
			require.Equal(b, n, due, "every row is due at a real local time")
		}
		// The next campaign builds on the same tables without this one's rows.
		_, err = pool.Exec(ctx, `DELETE FROM sends WHERE campaign_id = $1`, id)
		require.NoError(b, err)
		return d
	}
	var plain, local time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			plain += build(false)
			local += build(true)
		} else {
			local += build(true)
			plain += build(false)
		}
	}
	n := float64(b.N * rows)
	b.ReportMetric(float64(plain.Nanoseconds())/n, "plain-ns/recipient")
	b.ReportMetric(float64(local.Nanoseconds())/n, "local-ns/recipient")
	b.ReportMetric(float64(local)/float64(plain), "ratio")
}
