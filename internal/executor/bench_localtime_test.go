package executor

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
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
	var acct int64
	require.NoError(b, pool.QueryRow(ctx, `INSERT INTO accounts (name, time_zone) VALUES ('a', 'Europe/Paris') RETURNING id`).Scan(&acct))
	_, err = pool.Exec(ctx, `INSERT INTO subscribers (account_id, email, email_lower, status, attributes)
		SELECT $1, 's' || i || '@example.com', 's' || i || '@example.com', 'confirmed',
		       CASE i % 8 WHEN 0 THEN '{}'::jsonb WHEN 1 THEN '{"timezone": "Mars/Olympus"}'
		            WHEN 2 THEN '{"timezone": "Asia/Tokyo"}' WHEN 3 THEN '{"timezone": "Asia/Tokyo"}'
		            WHEN 4 THEN '{"timezone": "Europe/Berlin"}' WHEN 5 THEN '{"timezone": "Europe/Berlin"}'
		            ELSE '{"timezone": "America/New_York"}' END
		FROM generate_series(1, $2::int) i`, acct, rows)
	require.NoError(b, err)
	_, err = pool.Exec(ctx, `ANALYZE subscribers`)
	require.NoError(b, err)
	e, err := New(pool, newFake(true), Config{}, nil, nil)
	require.NoError(b, err)
	build := func(local bool) time.Duration {
		var id int64
		var at *string
		if local {
			v := "09:00"
			at = &v
		}
		require.NoError(b, pool.QueryRow(ctx, `INSERT INTO campaigns (account_id, name, subject, from_email,
			text_template, status, scheduled_for, approved_at, deliver_at_local)
			VALUES ($1, 'c', 's', 'news@example.com', 't', 'approved', now() - interval '1 minute', now(), $2)
			RETURNING id`, acct, at).Scan(&id))
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
