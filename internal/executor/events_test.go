package executor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// sendEvents returns, per send id of the campaign, the types of its send.* events
// (rows and event batches' elements).
func (f fixture) sendEvents(campaign int64) map[int64][]string {
	f.t.Helper()
	rows, err := f.pool.Query(context.Background(), `SELECT (data->>'send_id')::bigint, type FROM all_events
		WHERE type LIKE 'send.%' AND (data->>'campaign_id')::bigint = $1 ORDER BY id`, campaign)
	require.NoError(f.t, err)
	defer rows.Close()
	out := map[int64][]string{}
	for rows.Next() {
		var id int64
		var typ string
		require.NoError(f.t, rows.Scan(&id, &typ))
		out[id] = append(out[id], typ)
	}
	require.NoError(f.t, rows.Err())
	return out
}

// finalSends returns each send row's status.
func (f fixture) finalSends(campaign int64) map[int64]string {
	f.t.Helper()
	rows, err := f.pool.Query(context.Background(), `SELECT id, status FROM sends WHERE campaign_id = $1`, campaign)
	require.NoError(f.t, err)
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var s string
		require.NoError(f.t, rows.Scan(&id, &s))
		out[id] = s
	}
	return out
}

// TestSendEventsMatchTheSendRows: a campaign with permanent failures and
// temporary ones that succeed on retry ends with exactly one send.* event per
// recipient, of the row's final status (a retry writes none), plus one
// campaign.started and one campaign.sent, all written by the executor's own
// statements. The acknowledgements write them as event batches, one per
// acknowledgement; with an executor of an older release registered (one that
// does not read batches) as a row each.
func TestSendEventsMatchTheSendRows(t *testing.T) {
	t.Parallel()
	for _, older := range []bool{false, true} {
		t.Run(map[bool]string{false: "batches", true: "beside an older release"}[older], func(t *testing.T) {
			t.Parallel()
			sendEventsMatchTheSendRows(t, older)
		})
	}
}

func sendEventsMatchTheSendRows(t *testing.T, older bool) {
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	if older {
		_, err := pool.Exec(context.Background(), `INSERT INTO executors (host, pid) VALUES ('older', 1)`)
		require.NoError(t, err)
	}
	f.subscribers(acct, "s", 200, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	fake := newFake(true)
	fake.fail = func(m provider.Message, call int) error {
		switch {
		case strings.HasSuffix(m.To, "7@example.com"):
			return &provider.Error{Class: provider.Permanent, Code: 550, Err: errors.New("no such user")}
		case strings.HasSuffix(m.To, "3@example.com") && call == 1:
			return temporary("try later")
		}
		return nil
	}
	e := newExecutor(t, pool, fake, Config{Tick: 50 * time.Millisecond, BackoffBase: time.Millisecond,
		BackoffMax: time.Millisecond, Poll: 10 * time.Millisecond, Maintenance: 20 * time.Millisecond})
	runUntil(t, e)
	waitSent(t, f, e, c)

	final, events := f.finalSends(c), f.sendEvents(c)
	require.Len(t, final, 200)
	require.Len(t, events, 200, "one recipient, one event")
	statuses := map[string]int{}
	for id, status := range final {
		require.Equal(t, []string{"send." + status}, events[id], "send %d", id)
		statuses[status]++
	}
	require.Equal(t, map[string]int{"sent": 180, "failed": 20}, statuses)
	require.EqualValues(t, 1, f.int64(`SELECT count(*) FROM events WHERE type = 'campaign.started'
		AND (data->>'campaign_id')::bigint = $1`, c))
	require.EqualValues(t, 1, f.int64(`SELECT count(*) FROM events WHERE type = 'campaign.sent'
		AND (data->>'campaign_id')::bigint = $1`, c))
	require.EqualValues(t, 0, f.int64(`SELECT count(*) FROM events WHERE account_id <> $1`, acct))
	rows, batches := f.int64(`SELECT count(*) FROM events WHERE type LIKE 'send.%'`),
		f.int64(`SELECT count(*) FROM event_batches`)
	if older {
		require.EqualValues(t, 200, rows)
		require.Zero(t, batches)
	} else {
		require.Zero(t, rows)
		require.Positive(t, batches)
		require.EqualValues(t, 200, f.int64(`SELECT sum(n) FROM event_batches`))
		require.EqualValues(t, batches, f.int64(`SELECT count(DISTINCT xid) FROM event_batches`),
			"one batch per acknowledgement")
	}
}

// TestClaimAndRescueWriteTheirEvents: a row found suppressed at claim gets
// send.suppressed from the claim statement; an expired lease settled as unknown
// gets send.unknown from the rescue statement; a requeued one gets none.
func TestClaimAndRescueWriteTheirEvents(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	acct := f.account("a")
	f.subscribers(acct, "s", 3, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	f.start(c)
	q := store.New(pool)
	testfactory.New(pool).Suppression(t, acct, "s1@example.com", "manual", "t")
	rows, err := q.SendClaimBatch(ctx, store.SendClaimBatchParams{CampaignID: c, N: 10, Lease: leaseInterval(time.Minute)})
	require.NoError(t, err)
	require.Len(t, rows, 3)
	past := time.Now().Add(time.Hour)
	rescued, err := q.SendRescueExpired(ctx, store.SendRescueExpiredParams{Now: &past, MaxAttempts: 5,
		ExpiryDelays: []pgtype.Interval{leaseInterval(time.Second)}})
	require.NoError(t, err)
	require.Len(t, rescued, 2)

	final, events := f.finalSends(c), f.sendEvents(c)
	require.Len(t, events, 3)
	for id, status := range final {
		require.Equal(t, []string{"send." + status}, events[id])
	}
	require.Equal(t, 1, countOf(final, "suppressed"))
	require.Equal(t, 2, countOf(final, "unknown"))

	// An idempotent provider's expired lease is requeued: no event (nor for the
	// rows of the first campaign, which the rescue leaves as they are).
	c2 := f.campaign(acct, nil, "retry", time.Now().Add(-time.Minute))
	f.start(c2)
	_, err = q.SendClaimBatch(ctx, store.SendClaimBatchParams{CampaignID: c2, N: 10, Lease: leaseInterval(time.Minute),
		ViaProvider: "http", ViaIdempotent: true})
	require.NoError(t, err)
	_, err = q.SendRescueExpired(ctx, store.SendRescueExpiredParams{Now: &past, MaxAttempts: 5,
		ExpiryDelays: []pgtype.Interval{leaseInterval(time.Second)}})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"queued": 2}, f.counts(c2), "s1 was left out of the build")
	require.Empty(t, f.sendEvents(c2))
}

func countOf(m map[int64]string, status string) int {
	n := 0
	for _, s := range m {
		if s == status {
			n++
		}
	}
	return n
}

// TestLargeAcknowledgementSplitsItsEventBatch: one acknowledgement of 2,100
// outcomes of one account writes them as three event batches (1,024, 1,024 and
// 52: a batch holds at most an id window), each outcome once, with ids of its own.
func TestLargeAcknowledgementSplitsItsEventBatch(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "s", 2100, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	require.EqualValues(t, 2100, f.start(c))
	e := newExecutor(t, pool, newFake(true), Config{})
	claimAndAck(t, e, c, 2100)
	require.EqualValues(t, 1, f.int64(`SELECT count(DISTINCT xid) FROM event_batches`), "one acknowledgement")
	rows, err := pool.Query(context.Background(), `SELECT n FROM event_batches ORDER BY n DESC`)
	require.NoError(t, err)
	sizes, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(t, err)
	require.Equal(t, []int32{1024, 1024, 52}, sizes)
	require.EqualValues(t, 2100, f.int64(`SELECT count(DISTINCT id) FROM all_events WHERE type = 'send.sent'`))
	require.EqualValues(t, 2100, f.int64(`SELECT count(DISTINCT (data->>'send_id')) FROM all_events WHERE type = 'send.sent'`))
}
