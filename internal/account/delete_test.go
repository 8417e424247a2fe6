package account_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestDeleteAccountInBoundedTransactions: deleting an account removes all it
// holds, and no transaction deletes more than 1,000 of its rows. Every account's
// event readers wait below the oldest running transaction, so one DELETE of a large
// account (its sends, subscribers and events by cascade and trigger) would hold
// them all back for as long as it ran. Another account's rows stay. A trigger
// written here counts the rows each transaction deletes from the large tables.
func TestDeleteAccountInBoundedTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	svc := account.NewService(pool)
	a, _, err := svc.Create(ctx, "doomed")
	require.NoError(t, err)
	b, _, err := svc.Create(ctx, "kept")
	require.NoError(t, err)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	const n = 2500
	fx := testfactory.New(pool)
	for _, acct := range []int64{a.ID, b.ID} {
		fx.Subscribers(t, acct, "s", n, "confirmed")
		fx.MembersByPrefix(t, acct, fx.List(t, acct, "all"), "")
		c := fx.Campaign(t, acct, testfactory.Campaign{Subject: "C", FromEmail: "news@example.com", Text: "Hi", Status: "sent"})
		fx.SendsToAll(t, acct, c, "sent")
		fx.Events(t, acct, "send.sent", n, nil, "")
		fx.Suppressions(t, acct, "x", n, "manual")
	}
	exec(`CREATE TABLE deleted_per_tx (xid xid8, n bigint)`)
	exec(`CREATE FUNCTION count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN INSERT INTO deleted_per_tx SELECT pg_current_xact_id(), count(*) FROM gone; RETURN NULL; END $$`)
	for _, tbl := range []string{"subscribers", "list_members", "sends", "events", "suppressions"} {
		exec(`CREATE TRIGGER count_deleted AFTER DELETE ON ` + tbl + ` REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION count_deleted()`)
	}

	_, err = svc.Delete(ctx, a.ID)
	require.NoError(t, err)

	var worst, total int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(max(n), 0), coalesce(sum(n), 0)::bigint FROM (
		SELECT sum(n) AS n FROM deleted_per_tx GROUP BY xid::text) x`).Scan(&worst, &total))
	require.Equal(t, int64(5*n), total, "rows deleted from the large tables")
	require.LessOrEqual(t, worst, int64(1000), "one transaction deleted %d rows", worst)
	for _, tbl := range []string{"subscribers", "list_members", "sends", "events", "suppressions", "campaigns", "lists", "api_keys"} {
		var left, kept int64
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE account_id = $1), count(*) FILTER (WHERE account_id = $2) FROM `+tbl,
			a.ID, b.ID).Scan(&left, &kept))
		require.Zero(t, left, "%s of the deleted account", tbl)
		require.NotZero(t, kept, "%s of the other account", tbl)
	}
	_, err = svc.Get(ctx, a.ID)
	require.Error(t, err)
	_, err = svc.Delete(ctx, a.ID)
	require.True(t, apperr.Is(err, apperr.NotFound), "deleting it again: %v", err)
}
