package operator_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/operator"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// sendingAccount makes an account with n confirmed subscribers, a sending
// campaign with one queued send row each, and events events; it returns the
// account and the campaign.
func sendingAccount(t *testing.T, pool *pgxpool.Pool, name string, n, events int) (int64, int64) {
	t.Helper()
	ctx := context.Background()
	fx, now := testfactory.New(pool), time.Now()
	acct := fx.Account(t, name).ID
	fx.Subscribers(t, acct, "s", n, "confirmed")
	camp := fx.Campaign(t, acct, testfactory.Campaign{Subject: "Hi", FromEmail: "news@example.com", HTML: "<p>Hi</p>",
		Text: "Hi", Status: "sending", ScheduledFor: &now, ApprovedAt: &now, StartedAt: &now})
	fx.SendsToAll(t, acct, camp, "")
	fx.Events(t, acct, "send.sent", events, nil, "n")
	_, err := pool.Exec(ctx, `ANALYZE sends; ANALYZE events; ANALYZE subscribers`)
	require.NoError(t, err)
	return acct, camp
}

// TestPurgeWhileAnotherAccountSends: a deleted account's rows (sends, events,
// subscribers, its campaign) are all removed by the purger in batches, and the
// account with it, while another account's claims go on; the other account is
// untouched. It logs the other account's claim latency before and during the
// purge (a measurement, not an assertion). SENDONCE_PURGE_BENCH=1 runs it at
// 200,000 sends and 50,000 events (default: 20,000 and 5,000).
func TestPurgeWhileAnotherAccountSends(t *testing.T) {
	t.Parallel()
	sends, events, others := 20_000, 5_000, 100_000
	if os.Getenv("SENDONCE_PURGE_BENCH") == "1" {
		sends, events, others = 200_000, 50_000, 400_000
	}
	pool := dbtest.New(t)
	ctx := context.Background()
	gone, _ := sendingAccount(t, pool, "deleted", sends, events)
	other, camp := sendingAccount(t, pool, "other", others, 10)
	accounts := account.NewService(pool)
	ops := operator.NewService(pool, accounts)
	require.NoError(t, ops.Delete(ctx, gone))

	q := store.New(pool)
	claim := func() time.Duration {
		start := time.Now()
		rows, err := q.SendClaimBatch(ctx, store.SendClaimBatchParams{ViaProvider: "log", CampaignID: camp, N: 50,
			Lease: pgtype.Interval{Microseconds: int64(time.Minute / time.Microsecond), Valid: true}})
		require.NoError(t, err)
		require.Len(t, rows, 50)
		return time.Since(start)
	}
	quantiles := func(d []time.Duration) (p50, p99 time.Duration) {
		slices.Sort(d)
		return d[len(d)/2], d[len(d)*99/100]
	}
	var before []time.Duration
	for range 200 {
		before = append(before, claim())
	}

	p := operator.Purger{Pool: pool, Accounts: accounts, Batch: 1000, Pause: 20 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		id, err := p.PurgeOne(ctx)
		if err == nil && id != gone {
			err = context.Canceled
		}
		done <- err
	}()
	var during []time.Duration
	var took time.Duration
wait:
	for {
		select {
		case err := <-done:
			require.NoError(t, err)
			took = time.Since(start)
			break wait
		default:
			if len(before)+len(during) < others/50 { // until the other account has nothing left
				during = append(during, claim())
			} else {
				require.NoError(t, <-done)
				took = time.Since(start)
				break wait
			}
		}
	}
	b50, b99 := quantiles(before)
	d50, d99 := quantiles(during)
	t.Logf("purged %d sends + %d events (+ %d subscribers) in %s; the other account's claim of 50: "+
		"before p50 %s p99 %s (%d claims), during p50 %s p99 %s (%d claims)",
		sends, events, sends, took.Round(time.Millisecond), b50.Round(time.Microsecond), b99.Round(time.Microsecond),
		len(before), d50.Round(time.Microsecond), d99.Round(time.Microsecond), len(during))

	for _, table := range []string{"sends", "events", "subscribers", "campaigns", "accounts"} {
		col := "account_id"
		if table == "accounts" {
			col = "id"
		}
		var n int64
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE `+col+` = $1`, gone).Scan(&n))
		require.Zero(t, n, table)
	}
	var left int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE account_id = $1`, other).Scan(&left))
	require.EqualValues(t, others, left, "the other account keeps every row")
	id, err := p.PurgeOne(ctx)
	require.NoError(t, err)
	require.Zero(t, id, "nothing left to purge")
}
