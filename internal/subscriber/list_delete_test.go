package subscriber_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/subscriber"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestDeleteListInBoundedTransactions: deleting a list of 2,500 members removes
// its memberships and the list, and no transaction deletes more than 1,000 of
// them. Every account's event readers wait below the oldest running transaction,
// so a DELETE whose cascade took every membership at once held them all back for
// as long as it ran. A trigger written here counts the rows each transaction
// deletes. Another list of the account, and another account's list with the same
// id asked for, stay untouched.
func TestDeleteListInBoundedTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	svc := subscriber.NewService(pool)
	accounts := account.NewService(pool)
	a, _, err := accounts.Create(ctx, "a")
	require.NoError(t, err)
	b, _, err := accounts.Create(ctx, "b")
	require.NoError(t, err)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	count := func(sql string, args ...any) int64 {
		t.Helper()
		var n int64
		require.NoError(t, pool.QueryRow(ctx, sql, args...).Scan(&n))
		return n
	}
	const n = 2500
	fx := testfactory.New(pool)
	fx.Subscribers(t, a.ID, "s", n, "confirmed")
	doomed, kept := fx.List(t, a.ID, "doomed"), fx.List(t, a.ID, "kept")
	for _, l := range []int64{doomed, kept} {
		fx.MembersByPrefix(t, a.ID, l, "")
	}
	exec(`CREATE TABLE deleted_per_tx (xid xid8, n bigint)`)
	exec(`CREATE FUNCTION count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN INSERT INTO deleted_per_tx SELECT pg_current_xact_id(), count(*) FROM gone; RETURN NULL; END $$`)
	exec(`CREATE TRIGGER count_deleted AFTER DELETE ON list_members REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION count_deleted()`)

	// Another account cannot delete it: 404, nothing gone.
	require.True(t, apperr.Is(svc.DeleteList(ctx, b.ID, doomed), apperr.NotFound))
	require.Equal(t, int64(2*n), count(`SELECT count(*) FROM list_members`))

	require.NoError(t, svc.DeleteList(ctx, a.ID, doomed))
	var worst, total int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(max(n), 0), coalesce(sum(n), 0)::bigint FROM (
		SELECT sum(n) AS n FROM deleted_per_tx GROUP BY xid::text) x`).Scan(&worst, &total))
	require.Equal(t, int64(n), total, "memberships deleted")
	require.LessOrEqual(t, worst, int64(1000), "one transaction deleted %d memberships", worst)
	require.Zero(t, count(`SELECT count(*) FROM lists WHERE id = $1`, doomed))
	require.Equal(t, int64(n), count(`SELECT count(*) FROM list_members WHERE list_id = $1`, kept))
	require.Equal(t, int64(n), count(`SELECT count(*) FROM subscribers WHERE account_id = $1`, a.ID), "the subscribers stay")
	require.True(t, apperr.Is(svc.DeleteList(ctx, a.ID, doomed), apperr.NotFound), "deleting it again")
}

// TestDeleteListWithAMemberAddedMidway: a member is added (its transaction still
// open) while the list's memberships are deleted batch by batch. The batches do
// not see it; the list row's delete waits for the add to commit, and its cascade
// takes the new membership with the list: none is left behind, and the delete
// succeeds.
func TestDeleteListWithAMemberAddedMidway(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	svc := subscriber.NewService(pool)
	a, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	count := func(sql string, args ...any) int64 {
		t.Helper()
		var n int64
		require.NoError(t, pool.QueryRow(ctx, sql, args...).Scan(&n))
		return n
	}
	fx := testfactory.New(pool)
	fx.Subscribers(t, a.ID, "s", 1500, "confirmed")
	l := fx.List(t, a.ID, "l")
	_, err = pool.Exec(ctx, `INSERT INTO list_members (list_id, subscriber_id, account_id)
		SELECT $1, id, account_id FROM subscribers WHERE account_id = $2 AND email_lower <> 's1@example.com'`, l, a.ID)
	require.NoError(t, err)

	add, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = add.Rollback(ctx) }()
	_, err = add.Exec(ctx, `INSERT INTO list_members (list_id, subscriber_id, account_id)
		SELECT $1, id, account_id FROM subscribers WHERE account_id = $2 AND email_lower = 's1@example.com'`, l, a.ID)
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() { done <- svc.DeleteList(ctx, a.ID, l) }()
	// The list row's delete waits for the add.
	require.Eventually(t, func() bool {
		return count(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`) > 0
	}, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, add.Commit(ctx))
	require.NoError(t, <-done)
	require.Zero(t, count(`SELECT count(*) FROM list_members WHERE list_id = $1`, l))
	require.Zero(t, count(`SELECT count(*) FROM lists WHERE id = $1`, l))
}
