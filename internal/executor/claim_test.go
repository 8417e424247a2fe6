package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/suppression"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// started returns a fixture with one started campaign of n confirmed recipients
// s1..sn@example.com, the executor (not running) and its campaign state.
func started(t *testing.T, n int, policy string, p Provider, clk *heldClock) (fixture, *Executor, *campaign) {
	t.Helper()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "s", n, "confirmed")
	id := f.campaign(acct, nil, policy, clk.Now())
	e := newExecutor(t, pool, p, Config{Now: clk.Now, Lease: time.Minute, MaxAttempts: 3,
		BackoffBase: time.Second, BackoffMax: time.Minute, Workers: 100, BatchSize: 100})
	_, err := e.startDue(context.Background())
	require.NoError(t, err)
	return f, e, sendingCampaign(t, e, id)
}

func sendingCampaign(t *testing.T, e *Executor, id int64) *campaign {
	t.Helper()
	d := &dealer{byID: map[int64]*campaign{}}
	require.NoError(t, e.refresh(context.Background(), d))
	c := d.byID[id]
	require.NotNil(t, c, "campaign %d is not sending", id)
	return c
}

func TestClaimLeasesAndMarksSuppressedRows(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, e, c := started(t, 6, "skip", newFake(true), clk)
	ctx := context.Background()
	_, _, err := suppression.Add(ctx, f.pool, c.AccountID, "S1@example.com", "unsubscribe", "test")
	require.NoError(t, err)
	f.exec(`UPDATE subscribers SET status = 'unsubscribed' WHERE email_lower = 's2@example.com'`)
	f.exec(`DELETE FROM subscribers WHERE email_lower = 's3@example.com'`)

	rows, err := e.claim(ctx, c, 100)
	require.NoError(t, err)
	require.Len(t, rows, 6)
	got := map[string]string{}
	for _, r := range rows {
		got[r.Email] = r.Status
	}
	require.Equal(t, map[string]string{
		"s1@example.com": "suppressed", "s2@example.com": "suppressed", "s3@example.com": "suppressed",
		"s4@example.com": "sending", "s5@example.com": "sending", "s6@example.com": "sending",
	}, got)
	require.Equal(t, int64(3), f.int64(`SELECT count(*) FROM sends WHERE status = 'sending'
		AND attempts = 1 AND lease_until = $1`, clk.Now().Add(time.Minute)))
	require.Equal(t, int64(3), f.int64(`SELECT count(*) FROM sends WHERE status = 'suppressed'
		AND attempts = 0 AND lease_until IS NULL`))
	// Nothing is left queued to be walked over by later claims.
	rows, err = e.claim(ctx, c, 100)
	require.NoError(t, err)
	require.Empty(t, rows)
}

func TestClaimsAreDisjointAndRespectRetryTime(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, e, c := started(t, 10, "skip", newFake(true), clk)
	ctx := context.Background()
	f.exec(`UPDATE sends SET next_attempt_at = $1 WHERE email_lower IN ('s1@example.com', 's2@example.com')`, clk.Now().Add(time.Minute))
	a, err := e.claim(ctx, c, 5)
	require.NoError(t, err)
	b, err := e.claim(ctx, c, 5)
	require.NoError(t, err)
	require.Len(t, a, 5)
	require.Len(t, b, 3, "two rows wait for their retry time")
	seen := map[int64]bool{}
	for _, r := range append(a, b...) {
		require.False(t, seen[r.ID])
		seen[r.ID] = true
	}
	clk.Add(time.Minute)
	later, err := e.claim(ctx, c, 5)
	require.NoError(t, err)
	require.Len(t, later, 2)
}

func TestPauseStopsClaimsResumeContinuesCancelCloses(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, e, c := started(t, 10, "skip", newFake(true), clk)
	ctx := context.Background()
	first, err := e.claim(ctx, c, 2)
	require.NoError(t, err)
	require.Len(t, first, 2)

	f.exec(`UPDATE campaigns SET status = 'paused' WHERE id = $1`, c.ID)
	rows, err := e.claim(ctx, c, 10)
	require.NoError(t, err)
	require.Empty(t, rows, "a paused campaign gives out no new work")
	// In-flight sends of a paused campaign still finish and are acknowledged.
	e.flush([]result{e.send(ctx, job{campaign: c, row: first[0]})})
	require.False(t, e.finish(ctx, c.ID), "paused is not finished")

	f.exec(`UPDATE campaigns SET status = 'sending' WHERE id = $1`, c.ID)
	resumed, err := e.claim(ctx, c, 3)
	require.NoError(t, err)
	require.Len(t, resumed, 3)

	f.exec(`UPDATE campaigns SET status = 'cancelled', cancelled_at = now() WHERE id = $1`, c.ID)
	require.NoError(t, e.sweepCancelled(ctx))
	require.Equal(t, map[string]int{"sent": 1, "sending": 4, "cancelled": 5}, f.counts(c.ID))
	rows, err = e.claim(ctx, c, 10)
	require.NoError(t, err)
	require.Empty(t, rows)
	// A late ack of a row that was in flight at cancel time still records the send;
	// one that asks for a retry closes its row instead.
	e.flush([]result{e.send(ctx, job{campaign: c, row: first[1]})})
	require.Equal(t, 2, f.counts(c.ID)["sent"])
	var retries []result
	for _, r := range resumed {
		retries = append(retries, result{id: r.ID, attempts: r.Attempts, status: "queued", err: "451", next: clk.Now()})
	}
	e.flush(retries)
	require.Equal(t, map[string]int{"sent": 2, "cancelled": 8}, f.counts(c.ID))
	require.Equal(t, "cancelled", f.status(c.ID))
}

func TestFinalizerWaitsForQueuedAndSendingRows(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, e, c := started(t, 3, "skip", newFake(true), clk)
	ctx := context.Background()
	require.False(t, e.finish(ctx, c.ID))
	rows, err := e.claim(ctx, c, 10)
	require.NoError(t, err)
	require.False(t, e.finish(ctx, c.ID), "rows in flight")
	var res []result
	for _, r := range rows {
		res = append(res, e.send(ctx, job{campaign: c, row: r}))
	}
	e.flush(res)
	require.True(t, e.finish(ctx, c.ID))
	require.Equal(t, "sent", f.status(c.ID))
	require.Equal(t, int64(1), f.int64(`SELECT count(*) FROM campaigns WHERE id = $1 AND finished_at = $2`, c.ID, clk.Now()))
	require.False(t, e.finish(ctx, c.ID), "the CAS runs once")
}

// TestClaimUsesThePartialIndex runs EXPLAIN on the claim statement over a realistic
// table (many campaigns, most rows already sent, fresh statistics) and fails when
// the planner leaves the partial index sends_claim_idx (DESIGN.md §4).
func TestClaimUsesThePartialIndex(t *testing.T) {
	t.Parallel()
	var captured string
	url := dbtest.URL(t)
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.ConnConfig.Tracer = captureSQL(func(sql string) { captured = sql })
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	f := fixture{t, pool}
	ctx := context.Background()
	acct := f.account("a")
	f.subscribers(acct, "s", 2000, "confirmed")
	fx := testfactory.New(pool)
	for i := 1; i <= 100; i++ {
		fx.Campaign(t, acct, testfactory.Campaign{Name: fmt.Sprintf("c%d", i), Status: "sent"})
	}
	f.exec(`UPDATE campaigns SET status = 'sending' WHERE id = (SELECT max(id) FROM campaigns)`)
	// 200,000 rows: 99 finished campaigns, and the last one a quarter sent.
	f.exec(`INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status, sent_at)
		SELECT c.id, c.account_id, s.id, s.email, s.email_lower, 'campaign:' || c.id || ':' || s.id,
		       CASE WHEN c.status = 'sent' OR s.id % 4 = 0 THEN 'sent' ELSE 'queued' END, now()
		FROM campaigns c CROSS JOIN subscribers s`)
	// Suppressed addresses, none of them the campaign's: the check must probe them.
	fx.Suppressions(t, acct, "gone", 5000, "hard_bounce")
	f.exec(`ANALYZE sends`)
	f.exec(`ANALYZE campaigns`)
	f.exec(`ANALYZE subscribers`)
	f.exec(`ANALYZE suppressions`)
	c := f.int64(`SELECT max(id) FROM campaigns`)
	// Built without newExecutor: the fixture's sent rows never went through a
	// provider, so the invariant is checked without the provider's view.
	e, err := New(pool, newFake(true), Config{}, nil, nil)
	require.NoError(t, err)
	t.Cleanup(func() { invariant.Require(t, pool, invariant.Options{}) })
	_, err = e.q.SendClaimBatch(ctx, store.SendClaimBatchParams{CampaignID: c, N: 100,
		Lease: leaseInterval(time.Minute)})
	require.NoError(t, err)
	claimSQL := captured // the EXPLAINs below pass through the tracer too
	require.Contains(t, claimSQL, "SKIP LOCKED")
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		text := explain(t, pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = "+mode)
			return err
		}, claimSQL, false, nil, "default", c, int64(0), nil, int32(100), leaseInterval(time.Minute), nil, true) // $1 retry_ambiguous, $2 via_sender_id, $3 via_provider, $4 campaign, $5 after_id, $6 now, $7 n, $8 lease, $9 executor, $10 via_idempotent
		t.Logf("%s plan:\n%s", mode, text)
		require.Contains(t, text, "Index Scan using sends_claim_idx", "%s plan:\n%s", mode, text)
		require.NotContains(t, text, "Sort", "the claim must read the index in id order and stop at LIMIT")
		// The executor claims on the generic plan (ClaimPlanGeneric), which takes
		// LIMIT $n for a tenth of the queued rows: each picked row's subscriber and
		// suppression must still be index probes, not a hash of either table.
		for _, scan := range []string{"Seq Scan on subscribers", "Seq Scan on suppressions", "Hash", "Seq Scan on sends"} {
			require.NotContains(t, text, scan, "%s plan:\n%s", mode, text)
		}
	}

	// The rescuer, liveness included, runs every heartbeat on every replica: it
	// must read only the in-flight rows (sends_lease_idx), never walk the table.
	e.live.Assume(1, time.Time{}, time.Now().Add(-time.Hour))
	_, err = e.rescue(ctx)
	require.NoError(t, err)
	rescueSQL := captured
	require.Contains(t, rescueSQL, "executors")
	var plan []string
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "EXPLAIN "+rescueSQL, nil, true, int64(1), interval(6*time.Second),
			interval(30*time.Second), int32(5), e.retry.expiryTable(5)) // now, check_liveness, self, dead_after, unowned_grace, max_attempts, delays
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		return errors.New("rollback: leave nothing behind")
	})
	require.ErrorContains(t, err, "rollback:")
	text := strings.Join(plan, "\n")
	t.Logf("rescue plan:\n%s", text)
	require.Contains(t, text, "sends_lease_idx", "rescue plan:\n%s", text)
	require.NotContains(t, text, "Seq Scan on sends", "rescue plan:\n%s", text)
}

func TestMessageIsRenderedWithUnsubscribeHeaders(t *testing.T) {
	t.Parallel()
	clk := newClock()
	p := newFake(true)
	f, e, c := started(t, 1, "skip", p, clk)
	e.cfg.Links = func(a, cmp, s int64) (string, string) {
		return fmt.Sprintf("https://x.example/u/%d-%d-%d", a, cmp, s), "unsub@x.example"
	}
	row := outcome(t, e, c)
	_, _, order := p.snapshot()
	require.Len(t, order, 1)
	m := order[0]
	require.Equal(t, row.JobID, m.JobID)
	require.Equal(t, "s1@example.com", m.To)
	require.Equal(t, "Hello Sub 1", m.Subject)
	link := fmt.Sprintf("https://x.example/u/%d-%d-%d", c.AccountID, c.ID, row.SubscriberID)
	require.Contains(t, m.HTML, link)
	require.Contains(t, m.HTML, "Hi Sub 1 1")
	require.NotEmpty(t, m.MessageID)
	headers := map[string]string{}
	for _, h := range m.Headers {
		headers[h.Name] = h.Value
	}
	require.Contains(t, headers["List-Unsubscribe"], "<"+link+">")
	require.Contains(t, headers["List-Unsubscribe"], "mailto:unsub@x.example")
	require.Equal(t, "List-Unsubscribe=One-Click", headers["List-Unsubscribe-Post"])
	// The same job always carries the same Message-ID (a replay is the same message).
	again, err := e.build(job{campaign: c, row: row})
	require.NoError(t, err)
	require.Equal(t, m.MessageID, again.MessageID)
	// Keyed: no campaign or subscriber id shows in it.
	require.Regexp(t, `^[a-z2-7]{26}@`, m.MessageID)
	require.Equal(t, "sent", readSend(t, f.pool, row.ID).Status)
}

// TestClaimCursorLeavesNoRowBehind: the dispatcher's claims resume after the last
// id they took, so a row handed back behind the cursor (released unsent) is not in
// the next claim's range; the claim that comes back short or empty starts again
// from the beginning, and the row is claimed before the campaign counts as empty.
func TestClaimCursorLeavesNoRowBehind(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, e, c := started(t, 10, "skip", newFake(true), clk)
	ctx := context.Background()
	first, err := e.claim(ctx, c, 4)
	require.NoError(t, err)
	require.Len(t, first, 4)
	require.Equal(t, first[3].ID, c.after)
	// The first row goes back to the queue unsent, behind the cursor.
	n, err := e.release(ctx, []claimRef{{first[0].ID, first[0].Attempts}})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	next, err := e.claim(ctx, c, 4)
	require.NoError(t, err)
	require.Len(t, next, 4)
	for _, r := range next {
		require.Greater(t, r.ID, first[3].ID, "the cursor skips the claimed head")
	}
	tail, err := e.claim(ctx, c, 4)
	require.NoError(t, err)
	require.Len(t, tail, 2, "the last two fresh rows")
	require.Zero(t, c.after, "a short claim sends the cursor back to the start")
	again, err := e.claim(ctx, c, 4)
	require.NoError(t, err)
	require.Len(t, again, 1)
	require.Equal(t, first[0].ID, again[0].ID, "the released row is claimed before the campaign runs dry")
	empty, err := e.claim(ctx, c, 4)
	require.NoError(t, err)
	require.Empty(t, empty)
	require.Equal(t, map[string]int{"sending": 10}, f.counts(c.ID))
}

// TestClaimCursorRestartsWhenItFindsNothing: a full claim leaves the cursor at its
// last id; when every row after it is gone, the next claim goes back to the start
// in the same call instead of reporting the campaign empty.
func TestClaimCursorRestartsWhenItFindsNothing(t *testing.T) {
	t.Parallel()
	clk := newClock()
	_, e, c := started(t, 4, "skip", newFake(true), clk)
	ctx := context.Background()
	rows, err := e.claim(ctx, c, 4)
	require.NoError(t, err)
	require.Len(t, rows, 4)
	require.NotZero(t, c.after)
	_, err = e.release(ctx, []claimRef{{rows[1].ID, rows[1].Attempts}})
	require.NoError(t, err)
	again, err := e.claim(ctx, c, 4)
	require.NoError(t, err)
	require.Len(t, again, 1)
	require.Equal(t, rows[1].ID, again[0].ID)
}
