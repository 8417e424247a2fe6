package complaint_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/complaint"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/testfactory"
)

type fx struct {
	t    *testing.T
	pool *pgxpool.Pool
}

func (f fx) id(sql string, args ...any) int64 {
	f.t.Helper()
	var id int64
	require.NoError(f.t, f.pool.QueryRow(context.Background(), sql, args...).Scan(&id))
	return id
}

func (f fx) exec(sql string, args ...any) {
	f.t.Helper()
	_, err := f.pool.Exec(context.Background(), sql, args...)
	require.NoError(f.t, err)
}

// campaign makes a sending campaign of acct through sender (nil: the default)
// with n delivered sends routed through via (nil: the environment's provider),
// the first complaints of them complained about at complainedAt.
func (f fx) campaign(acct int64, sender, via *int64, n, complaints int, complainedAt time.Time) int64 {
	started := time.Now()
	c := testfactory.New(f.pool).Campaign(f.t, acct, testfactory.Campaign{FromEmail: "news@example.com", Text: "hi",
		Status: "sending", StartedAt: &started, SenderID: sender})
	f.exec(`INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status, sent_at, via_sender_id,
			feedback, feedback_at)
		SELECT $1::bigint, $2::bigint, i, 'r' || i || '@example.com', 'r' || i || '@example.com', 'campaign:' || $1::bigint || ':' || i, 'sent',
		       $5::timestamptz - interval '1 hour', $3::bigint,
		       CASE WHEN i <= $4::int THEN 'complaint' END, CASE WHEN i <= $4::int THEN $5::timestamptz END
		FROM generate_series(1, $6::int) i`, c, acct, via, complaints, complainedAt, n)
	return c
}

func (f fx) status(c int64) (string, *string) {
	var s string
	var r *string
	require.NoError(f.t, f.pool.QueryRow(context.Background(), `SELECT status, paused_reason FROM campaigns WHERE id = $1`, c).Scan(&s, &r))
	return s, r
}

func (f fx) events(acct int64, typ string) int64 {
	return f.id(`SELECT count(*) FROM events WHERE account_id = $1 AND type = $2`, acct, typ)
}

// Above 0.3 % with enough deliveries, a sender's sending campaigns pause with the
// reason and one event says so; at or under the threshold, under the minimum
// volume, another sender's and another account's campaigns go on; a campaign of
// the tripped sender that starts later pauses too; resuming by hand clears it.
func TestComplaintGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	f := fx{t, pool}
	now := time.Date(2030, 1, 8, 12, 0, 0, 0, time.UTC)
	accounts := testfactory.New(pool)
	a, b := accounts.Account(t, "a").ID, accounts.Account(t, "b").ID
	bad := accounts.Sender(t, a, "bad", "http", false)
	fine := accounts.Sender(t, a, "fine", "http", true)
	bSender := accounts.Sender(t, b, "b", "http", false)

	recent := now.Add(-time.Hour)
	badC := f.campaign(a, &bad, &bad, 1000, 4, recent)           // 0.4 %
	fineC := f.campaign(a, nil, &fine, 1000, 3, recent)          // 0.3 %: not above
	smallC := f.campaign(b, &bSender, &bSender, 100, 10, recent) // 10 %, but under the minimum volume
	oldC := f.campaign(b, nil, nil, 1000, 50, now.Add(-30*24*time.Hour))

	g := &complaint.Guard{Pool: pool, Max: 0.003, Window: 7 * 24 * time.Hour, MinDelivered: 500, Now: func() time.Time { return now }}
	paused, err := g.Pass(ctx)
	require.NoError(t, err)
	require.Equal(t, []int64{badC}, paused)
	s, reason := f.status(badC)
	require.Equal(t, "paused", s)
	require.NotNil(t, reason)
	require.Contains(t, *reason, "complaint rate 0.40 %")
	for _, c := range []int64{fineC, smallC, oldC} {
		s, _ := f.status(c)
		require.Equal(t, "sending", s, "campaign %d", c)
	}
	require.EqualValues(t, 1, f.events(a, "sender.complaint_rate_exceeded"))
	require.EqualValues(t, 1, f.events(a, "campaign.paused"))
	require.Zero(t, f.events(b, "sender.complaint_rate_exceeded"))

	// A campaign of the same sender that starts later pauses at the next pass;
	// no second rate event.
	later := f.campaign(a, &bad, &bad, 0, 0, now)
	paused, err = g.Pass(ctx)
	require.NoError(t, err)
	require.Equal(t, []int64{later}, paused)
	require.EqualValues(t, 1, f.events(a, "sender.complaint_rate_exceeded"))

	// Resuming by hand is the operator's decision: the guard is cleared and the
	// next pass (no new complaint) leaves the campaign sending.
	svc := campaign.NewService(pool)
	_, err = svc.Resume(ctx, a, badC)
	require.NoError(t, err)
	paused, err = g.Pass(ctx)
	require.NoError(t, err)
	require.Empty(t, paused)
	s, _ = f.status(badC)
	require.Equal(t, "sending", s)

	// Max 0 disables the guard.
	off := &complaint.Guard{Pool: pool, Window: time.Hour, MinDelivered: 1}
	paused, err = off.Pass(ctx)
	require.NoError(t, err)
	require.Empty(t, paused)
}

// A tripped route clears by itself once its rate falls back under the threshold.
func TestComplaintGuardClears(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	f := fx{t, pool}
	now := time.Date(2030, 1, 8, 12, 0, 0, 0, time.UTC)
	a := testfactory.New(pool).Account(t, "a").ID
	f.campaign(a, nil, nil, 1000, 5, now.Add(-time.Hour))
	g := &complaint.Guard{Pool: pool, Max: 0.003, Window: 24 * time.Hour, MinDelivered: 500, Now: func() time.Time { return now }}
	_, err := g.Pass(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, f.id(`SELECT count(*) FROM complaint_guards`))
	f.campaign(a, nil, nil, 2000, 0, now) // 5 in 3000: 0.17 %
	_, err = g.Pass(ctx)
	require.NoError(t, err)
	require.Zero(t, f.id(`SELECT count(*) FROM complaint_guards`))
}
