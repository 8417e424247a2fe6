package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
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
	seg := f.int64(`INSERT INTO segments (account_id, name, match) VALUES ($1, 'low', '$.n <= 4') RETURNING id`, acct)
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
	seg := f.int64(`INSERT INTO segments (account_id, name, match) VALUES ($1, 'slow',
		'exists($.a[*] ? (exists($.a[*] ? (exists($.a[*] ? (@ == -1))))))') RETURNING id`, acct)
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
