package report_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/harnessstore"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestStatusCountersEqualRecount walks a campaign's rows through every statement
// that moves a send's status — the claim (sending, and at claim: suppressed,
// not-confirmed, rerouted to unknown), every acknowledgement outcome and a late
// 'sent' over the rescuer's unknown, a release (of a sending and of an unknown
// row), the rescuer, the opt-out, erasure, retry-failed, a lost claim's release,
// an acknowledgement and a sweep in a cancelled campaign, and retention — and holds
// the kept status counts (what /stats and the report read) equal to a full recount
// after each step, another account's campaign beside it untouched.
func TestStatusCountersEqualRecount(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	q := store.New(pool)
	fx := testfactory.New(pool)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	newCampaign := func(name string, n int) (acct, id int64, subs, sends []int64) {
		acc, _, err := account.NewService(pool).Create(ctx, name)
		require.NoError(t, err)
		c, err := campaign.NewService(pool).Create(ctx, acc.ID, campaign.Fields{Name: str("c"), Subject: str("s"),
			FromEmail: str("a@example.com"), TextTemplate: str("hi")})
		require.NoError(t, err)
		exec(`UPDATE campaigns SET status = 'sending' WHERE id = $1`, c.ID)
		for i := range n {
			email := fmt.Sprintf("%s-%d@%s", name, i, domains[i%len(domains)])
			sub := fx.Subscriber(t, acc.ID, testfactory.Subscriber{Email: email, Status: "confirmed"})
			send := fx.Send(t, acc.ID, c.ID, sub, testfactory.Send{Email: email})
			subs, sends = append(subs, sub), append(sends, send)
		}
		return acc.ID, c.ID, subs, sends
	}
	acct, cid, subs, s := newCampaign("a", 12)
	otherAcct, other, _, _ := newCampaign("b", 3)

	executorID, err := store.New(pool).ExecutorRegister(ctx, store.ExecutorRegisterParams{Host: "test", Pid: 1})
	require.NoError(t, err)
	later := func(d time.Duration) *time.Time { x := time.Now().Add(d); return &x }
	claim := func(campaignID int64, now *time.Time) []store.SendClaimBatchRow {
		t.Helper()
		rows, err := q.SendClaimBatch(ctx, store.SendClaimBatchParams{CampaignID: campaignID, N: 100, Now: now,
			Lease:       pgtype.Interval{Microseconds: int64(time.Minute / time.Microsecond), Valid: true},
			ViaProvider: "log", ExecutorID: &executorID})
		require.NoError(t, err)
		return rows
	}
	ack := func(outcomes map[int64]string) {
		t.Helper()
		p := store.SendAckManyParams{}
		for id, st := range outcomes {
			var attempts int32
			require.NoError(t, pool.QueryRow(ctx, `SELECT attempts FROM sends WHERE id = $1`, id).Scan(&attempts))
			p.Ids, p.Attempts, p.Statuses = append(p.Ids, id), append(p.Attempts, attempts), append(p.Statuses, st)
			p.ProviderIds, p.Errors = append(p.ProviderIds, ""), append(p.Errors, "")
			p.RetryInUs, p.Doubts = append(p.RetryInUs, 0), append(p.Doubts, false)
		}
		_, err := q.SendAckMany(ctx, p)
		require.NoError(t, err)
	}
	statusOf := func(id int64) string {
		var st string
		require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM sends WHERE id = $1`, id).Scan(&st))
		return st
	}
	check := func(step string) {
		t.Helper()
		for _, c := range []struct{ acct, id int64 }{{acct, cid}, {otherAcct, other}} {
			kept, err := q.CampaignStatusCounts(ctx, store.CampaignStatusCountsParams{AccountID: c.acct, CampaignID: c.id})
			require.NoError(t, err)
			recount, err := q.CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: c.acct, CampaignID: c.id})
			require.NoError(t, err)
			require.Equal(t, store.CampaignStatusCountsRow(recount), kept, "after %s, campaign %d", step, c.id)
		}
		diff, err := harnessstore.New(pool).InvariantKeptCounts(ctx)
		require.NoError(t, err)
		require.Empty(t, diff, "after %s", step)
	}
	check("the build")

	// At claim: s[1] suppressed, s[2] no longer confirmed, s[3] in doubt through
	// another route (unknown); the rest sending.
	var suppressed string
	require.NoError(t, pool.QueryRow(ctx, `SELECT email_lower FROM sends WHERE id = $1`, s[1]).Scan(&suppressed))
	fx.Suppression(t, acct, suppressed, "manual", "test")
	exec(`UPDATE subscribers SET status = 'unsubscribed' WHERE id = $1`, subs[2])
	exec(`UPDATE sends SET in_doubt = true, via_provider = 'smtp' WHERE id = $1`, s[3])
	require.Len(t, claim(cid, nil), 12)
	require.Equal(t, []string{"suppressed", "suppressed", "unknown", "sending"},
		[]string{statusOf(s[1]), statusOf(s[2]), statusOf(s[3]), statusOf(s[4])})
	check("the claim")

	ack(map[int64]string{s[4]: "sent", s[5]: "failed", s[6]: "unknown", s[7]: "queued", s[8]: "sent"})
	check("the acknowledgement")

	// A release of a row never sent; the rescuer takes the rest (skip: unknown);
	// a late 'sent' lands on one of them, a release on another.
	n, err := q.SendReleaseMany(ctx, store.SendReleaseManyParams{Ids: []int64{s[10]}, Attempts: []int32{1}})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	rescued, err := q.SendRescueExpired(ctx, store.SendRescueExpiredParams{Now: later(time.Hour), MaxAttempts: 5,
		ExpiryDelays: []pgtype.Interval{{Valid: true}}})
	require.NoError(t, err)
	require.Len(t, rescued, 3) // s[0], s[9], s[11]
	check("the rescue")
	ack(map[int64]string{s[9]: "sent"})
	require.Equal(t, "sent", statusOf(s[9]))
	n, err = q.SendReleaseMany(ctx, store.SendReleaseManyParams{Ids: []int64{s[11]}, Attempts: []int32{1}})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.Equal(t, "queued", statusOf(s[11]))
	check("a late ack and a release of an unknown row")

	// s[7] (queued by its retry) leaves the campaign's list; s[10] is erased.
	list := fx.List(t, acct, "l")
	exec(`UPDATE campaigns SET list_ids = ARRAY[$1::bigint] WHERE id = $2`, list, cid)
	_, err = q.SendSuppressLeftLists(ctx, store.SendSuppressLeftListsParams{AccountID: acct, SubscriberIds: []int64{subs[7]}})
	require.NoError(t, err)
	require.Equal(t, "suppressed", statusOf(s[7]))
	n, err = q.ErasureSendsSuppressQueued(ctx, store.ErasureSendsSuppressQueuedParams{AccountID: acct, Ids: []int64{s[10]}})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	check("an opt-out and an erasure")

	// Retry-failed: the failed row back to the queue.
	n, err = q.SendRequeueFailed(ctx, store.SendRequeueFailedParams{AccountID: acct, CampaignID: cid})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	check("retry-failed")

	// s[5] claimed again (s[11] not due yet); cancelled: a lost claim's release
	// closes s[5] as cancelled, the sweep s[11].
	exec(`UPDATE sends SET next_attempt_at = now() + interval '1 day' WHERE id = $1`, s[11])
	require.Len(t, claim(cid, nil), 1)
	exec(`UPDATE campaigns SET status = 'cancelled', cancelled_at = now() WHERE id = $1`, cid)
	n, err = q.SendReleaseLost(ctx, store.SendReleaseLostParams{ExecutorIds: []int64{executorID},
		LeaseFromInUs: -int64(24 * time.Hour / time.Microsecond)})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.Equal(t, "cancelled", statusOf(s[5]))
	check("a lost claim's release in a cancelled campaign")
	exec(`UPDATE campaigns SET status = 'sending' WHERE id = $1`, other)
	require.Len(t, claim(other, nil), 3)
	exec(`UPDATE campaigns SET status = 'cancelled', cancelled_at = now() WHERE id = $1`, other)
	var otherSends []int64
	rows, err := pool.Query(ctx, `SELECT id FROM sends WHERE campaign_id = $1 ORDER BY id`, other)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		otherSends = append(otherSends, id)
	}
	require.NoError(t, rows.Err())
	ack(map[int64]string{otherSends[0]: "queued", otherSends[1]: "sent"})
	require.Equal(t, "cancelled", statusOf(otherSends[0]))
	n, err = q.SendReleaseMany(ctx, store.SendReleaseManyParams{Ids: []int64{otherSends[2]}, Attempts: []int32{1}})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	check("an acknowledgement and a release in a cancelled campaign")
	n, err = q.SendSweepCancelled(ctx, store.SendSweepCancelledParams{AccountID: acct, CampaignID: cid})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.Equal(t, "cancelled", statusOf(s[11]))
	check("the sweep")

	// Retention archives and deletes the settled rows: the kept counts stay.
	before, err := q.CampaignStatusCounts(ctx, store.CampaignStatusCountsParams{AccountID: acct, CampaignID: cid})
	require.NoError(t, err)
	_, err = q.SendDeleteRetired(ctx, store.SendDeleteRetiredParams{CampaignID: cid, N: 1000})
	require.NoError(t, err)
	var left int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE campaign_id = $1`, cid).Scan(&left))
	require.Zero(t, left)
	after, err := q.CampaignStatusCounts(ctx, store.CampaignStatusCountsParams{AccountID: acct, CampaignID: cid})
	require.NoError(t, err)
	require.Equal(t, before, after)
	require.Equal(t, int64(12), after.Sent+after.Failed+after.Unknown+after.Suppressed+after.Cancelled)
	check("retention")
	invariant.Require(t, pool, invariant.Options{KeptCounters: true})
}
