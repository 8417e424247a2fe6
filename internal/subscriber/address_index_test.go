package subscriber_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/subscriber"
)

// TestOneAddressIndex: a subscriber's address has one index (migration 00850), not
// a unique key beside a text_pattern_ops copy of it. That one index keeps the
// address unique per account, is the import's ON CONFLICT arbiter, and serves both
// equality and prefix search (LIKE 'abc%') whatever the collation — a default
// operator class index serves a prefix only under the C collation.
func TestOneAddressIndex(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()

	type index struct {
		def    string
		unique bool
	}
	rows, err := pool.Query(ctx, `SELECT pg_get_indexdef(indexrelid), indisunique FROM pg_index
		WHERE indrelid = 'subscribers'::regclass AND pg_get_indexdef(indexrelid) LIKE '%email_lower%'`)
	require.NoError(t, err)
	indexes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (index, error) {
		var i index
		return i, r.Scan(&i.def, &i.unique)
	})
	require.NoError(t, err)
	var defs []string
	for _, i := range indexes {
		require.True(t, i.unique, i.def)
		defs = append(defs, i.def)
	}
	require.Len(t, defs, 1, "indexes of subscribers on email_lower: %v", defs)
	require.Contains(t, defs[0], "(account_id, email_lower text_pattern_ops)")

	// The arbiter: the same addresses again, spelt otherwise, update; a second
	// account's same address is its own subscriber.
	svc := subscriber.NewService(pool)
	var accounts []int64
	for _, name := range []string{"a", "b"} {
		acc, _, err := account.NewService(pool).Create(ctx, name)
		require.NoError(t, err)
		accounts = append(accounts, acc.ID)
	}
	importOf := func(acc int64, emails ...string) subscriber.ImportResult {
		var in []subscriber.ImportRow
		for i, e := range emails {
			in = append(in, subscriber.ImportRow{Line: i + 2, Email: e})
		}
		res, err := svc.Import(ctx, acc, in, nil, nil)
		require.NoError(t, err)
		require.Empty(t, res.Rejected)
		return res
	}
	res := importOf(accounts[0], "ann@example.com", "bob@example.com")
	require.Equal(t, [2]int64{2, 0}, [2]int64{res.Inserted, res.Updated})
	res = importOf(accounts[0], "ANN@example.com", "Bob@Example.com", "cat@example.com")
	require.Equal(t, [2]int64{1, 2}, [2]int64{res.Inserted, res.Updated})
	res = importOf(accounts[1], "ann@example.com")
	require.Equal(t, [2]int64{1, 0}, [2]int64{res.Inserted, res.Updated})
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM subscribers WHERE email_lower = 'ann@example.com'`).Scan(&n))
	require.Equal(t, 2, n)
	_, err = pool.Exec(ctx, `INSERT INTO subscribers (account_id, email, email_lower) VALUES ($1, 'Cat@example.com', 'cat@example.com')`, accounts[0])
	require.ErrorContains(t, err, "subscribers_account_email_key")

	// Equality and a prefix under a collation that is not C both search the index.
	var many []string
	for i := range 3000 {
		many = append(many, fmt.Sprintf("user%04d@example.com", i))
	}
	importOf(accounts[0], many...)
	_, err = pool.Exec(ctx, `ANALYZE subscribers`)
	require.NoError(t, err)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `SET enable_seqscan = off`)
	require.NoError(t, err)
	for _, where := range []string{
		`email_lower = 'ann@example.com'`,
		`email_lower = ANY('{ann@example.com,bob@example.com}')`,
		`email_lower LIKE 'an%'`,
		`email_lower LIKE 'an%' COLLATE "und-x-icu"`,
	} {
		rows, err := conn.Query(ctx, `EXPLAIN SELECT id FROM subscribers WHERE account_id = $1 AND `+where, accounts[0])
		require.NoError(t, err)
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		text := strings.Join(plan, "\n")
		require.Contains(t, text, "subscribers_account_email_key", where+":\n"+text)
		cond := "email_lower = "
		if strings.Contains(where, "LIKE") {
			cond = "email_lower ~>=~ " // the prefix bounds the scan
		}
		require.Regexp(t, `Index Cond: \(.*`+regexp.QuoteMeta(cond), text, where)
	}
}
