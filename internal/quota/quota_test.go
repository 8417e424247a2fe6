package quota_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/quota"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/subscriber"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestQuotaWritersTakeTurns: a create under the subscribers quota waits for a
// transaction that holds the quota's lock and then counts what it committed, so
// two writers at the last free place cannot both take it (no overshoot).
func TestQuotaWritersTakeTurns(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	acct := testfactory.New(pool).Account(t, "q").ID
	one := int64(1)
	_, err := store.New(pool).OperatorAccountSetQuotas(ctx, store.OperatorAccountSetQuotasParams{ID: acct,
		SetSubscribers: true, Subscribers: &one})
	require.NoError(t, err)
	subs := subscriber.NewService(pool)

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	limit, used, ok, err := quota.Room(ctx, store.New(tx), acct, quota.Subscribers)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, [2]int64{1, 0}, [2]int64{limit, used})
	_, err = tx.Exec(ctx, `INSERT INTO subscribers (account_id, email, email_lower) VALUES ($1, 'a@example.com', 'a@example.com')`, acct)
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() {
		_, err := subs.Create(ctx, acct, subscriber.Input{Email: "b@example.com"})
		done <- err
	}()
	// The second writer waits on the quota's lock (wait on the system, not a sleep).
	require.Eventually(t, func() bool {
		var n int
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n)
		return n == 1
	}, 10*time.Second, 5*time.Millisecond, "the second create waits for the first transaction")
	require.NoError(t, tx.Commit(ctx))
	err = <-done
	require.True(t, apperr.Is(err, apperr.QuotaExceeded), "%v", err)
	var n int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM subscribers WHERE account_id = $1`, acct).Scan(&n))
	require.EqualValues(t, 1, n)
}
