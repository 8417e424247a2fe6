package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/testfactory"
)

func TestBuildAppliesTheSegmentAndSkipsUnsubscribedMemberships(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	clk := newClock()
	acct := f.account("a")
	f.subscribers(acct, "s", 10, "confirmed") // attributes {"n": i}
	l := f.list(acct, "l")
	f.members(acct, l, "s")
	// s2 left the list: the membership stays, marked.
	f.exec(`UPDATE list_members SET status = 'unsubscribed', status_source = 'test'
		WHERE subscriber_id = (SELECT id FROM subscribers WHERE email_lower = 's2@example.com')`)
	seg := testfactory.New(pool).Segment(t, acct, testfactory.Segment{Name: "low", Match: "$.n <= 4"})
	c := f.campaign(acct, []int64{l}, "skip", clk.Now())
	f.exec(`UPDATE campaigns SET segment_id = $1 WHERE id = $2`, seg, c)
	whole := f.campaign(acct, []int64{l}, "skip", clk.Now())

	e := newExecutor(t, pool, newFake(true), Config{Now: clk.Now})
	n, err := e.startDue(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	// n in 1..4, without s2.
	require.Equal(t, int64(3), f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1`, c))
	require.Equal(t, int64(0), f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1
		AND email_lower NOT IN ('s1@example.com', 's3@example.com', 's4@example.com')`, c))
	require.Equal(t, int64(9), f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1`, whole))
	// The timeout was local to the start's transaction.
	var timeout string
	require.NoError(t, pool.QueryRow(ctx, `SHOW statement_timeout`).Scan(&timeout))
	require.Equal(t, "0", timeout)
}

func TestSegmentBuildPastItsTimeLimitFailsTheCampaign(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	clk := newClock()
	acct := f.account("a")
	f.subscribers(acct, "s", 1, "confirmed")
	f.exec(`UPDATE subscribers SET attributes = jsonb_build_object('a', (SELECT jsonb_agg(i) FROM generate_series(1, 3000) i))`)
	seg := testfactory.New(pool).Segment(t, acct, testfactory.Segment{Name: "slow",
		Match: "exists($.a[*] ? (exists($.a[*] ? (exists($.a[*] ? (@ == -1))))))"})
	c := f.campaign(acct, nil, "skip", clk.Now())
	f.exec(`UPDATE campaigns SET segment_id = $1 WHERE id = $2`, seg, c)

	e := newExecutor(t, pool, newFake(true), Config{Now: clk.Now, SegmentBuildTimeout: 200 * time.Millisecond})
	ok, err := e.startCampaign(ctx, c)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, "failed", f.status(c))
	require.Equal(t, int64(0), f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1`, c))
	require.Equal(t, int64(1), f.int64(`SELECT count(*) FROM campaigns WHERE id = $1
		AND failed_reason = 'the segment''s recipient build exceeded its time limit of 200ms'`, c))
}

// TestFailedBuildRemovesItsRowsInBoundedTransactions: a build that fails (here a
// take-over of a build that had queued 2,500 rows, whose segment then runs past
// its limit) fails the campaign in one short transaction and removes what it had
// queued 1,000 rows per transaction: every account's event readers wait below the
// oldest running transaction, so a removal growing with the audience held them all
// back. A failed campaign whose rows were left (its process killed between
// batches) is emptied by the maintenance sweep the same way. A trigger written
// here counts the rows each transaction deletes.
func TestFailedBuildRemovesItsRowsInBoundedTransactions(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	clk := newClock()
	acct := f.account("a")
	f.subscribers(acct, "s", 1, "confirmed")
	f.exec(`UPDATE subscribers SET attributes = jsonb_build_object('a', (SELECT jsonb_agg(i) FROM generate_series(1, 3000) i))`)
	f.subscribers(acct, "q", 2500, "confirmed")
	seg := testfactory.New(pool).Segment(t, acct, testfactory.Segment{Name: "slow",
		Match: "exists($.a[*] ? (exists($.a[*] ? (exists($.a[*] ? (@ == -1))))))"})
	queue := func(c int64) {
		testfactory.New(pool).Sends(t, acct, c, testfactory.Sends{Prefix: "q"})
	}
	// A build whose builder died after queuing 2,500 rows: anyone's to take over.
	c := f.campaign(acct, nil, "skip", clk.Now())
	f.exec(`UPDATE campaigns SET segment_id = $1, status = 'building', build_executor_id = NULL WHERE id = $2`, seg, c)
	queue(c)
	// A failed campaign whose removal was cut short.
	left := f.campaign(acct, nil, "skip", clk.Now())
	f.exec(`UPDATE campaigns SET status = 'failed', failed_reason = 'test', finished_at = now() WHERE id = $1`, left)
	queue(left)

	f.exec(`CREATE TABLE deleted_per_tx (xid xid8, n bigint)`)
	f.exec(`CREATE FUNCTION count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN INSERT INTO deleted_per_tx SELECT pg_current_xact_id(), count(*) FROM gone; RETURN NULL; END $$`)
	f.exec(`CREATE TRIGGER count_deleted AFTER DELETE ON sends REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION count_deleted()`)
	worst := func() int64 {
		return f.int64(`SELECT coalesce(max(n), 0)::bigint FROM (SELECT sum(n) AS n FROM deleted_per_tx GROUP BY xid::text) x`)
	}

	e := newExecutor(t, pool, newFake(true), Config{Now: clk.Now, SegmentBuildTimeout: 200 * time.Millisecond})
	ok, err := e.startCampaign(ctx, c)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, "failed", f.status(c))
	require.Equal(t, int64(1), f.int64(`SELECT count(*) FROM events WHERE type = 'campaign.failed' AND (data->>'campaign_id')::bigint = $1`, c))
	require.Equal(t, int64(0), f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1`, c))
	require.LessOrEqual(t, worst(), int64(1000), "the fail removed %d rows in one transaction", worst())

	require.Equal(t, int64(2500), f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1`, left))
	require.NoError(t, e.maintainOnce(ctx))
	require.Equal(t, int64(0), f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1`, left), "the maintenance empties a failed campaign")
	require.Equal(t, int64(5000), f.int64(`SELECT coalesce(sum(n), 0)::bigint FROM deleted_per_tx`))
	require.LessOrEqual(t, worst(), int64(1000), "one transaction removed %d rows", worst())
}
