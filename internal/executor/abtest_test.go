package executor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// abCampaign makes approved campaign c of acct an A/B test: mode, with the
// variants' subjects ("" keeps the campaign's own, "Hello {{.Name}}").
func (f fixture) abCampaign(acct, c int64, mode string, percent *int, wait int, metric string, subjects ...string) {
	f.t.Helper()
	var w, m any
	if mode == "test" {
		w, m = wait, metric
	}
	f.exec(`UPDATE campaigns SET ab_mode = $2, ab_variants = $3, ab_test_percent = $4, ab_wait_seconds = $5,
		ab_metric = $6 WHERE id = $1`, c, mode, len(subjects), percent, w, m)
	for i, s := range subjects {
		testfactory.New(f.pool).Variant(f.t, acct, c, testfactory.Variant{Idx: int16(i + 1), Subject: s})
	}
}

// variantSubjects maps each job id to the subjects of every call the provider
// got for it: one variant per recipient means one subject per job id, across
// replays too.
func variantSubjects(p *fakeProvider) map[string]map[string]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]map[string]bool{}
	for _, m := range p.order {
		if out[m.JobID] == nil {
			out[m.JobID] = map[string]bool{}
		}
		out[m.JobID][m.Subject] = true
	}
	return out
}

// requireOneVariantEach: every row of campaign c has a variant, and every message
// the provider took for it carried that variant's subject, and only that one.
func requireOneVariantEach(t *testing.T, f fixture, p *fakeProvider, c int64, subjects map[int16]string) {
	t.Helper()
	rows, err := f.pool.Query(context.Background(), `SELECT job_id, variant FROM sends WHERE campaign_id = $1`, c)
	require.NoError(t, err)
	defer rows.Close()
	seen := variantSubjects(p)
	n := 0
	for rows.Next() {
		var job string
		var v *int16
		require.NoError(t, rows.Scan(&job, &v))
		require.NotNil(t, v, "row %s has no variant", job)
		require.Len(t, seen[job], 1, "row %s got %v", job, seen[job])
		for s := range seen[job] {
			require.True(t, strings.HasPrefix(s, subjects[*v]), "row %s of variant %d got %q", job, *v, s)
		}
		n++
	}
	require.NoError(t, rows.Err())
	require.Len(t, seen, n, "a message for each row, none for anybody else")
}

// TestABSplitSendsEachRecipientOneVariant: a split campaign, sent end to end by
// the running executor, sends every recipient exactly one message, of the variant
// recorded on its row, which is the hash of its job id (a rebuild picks the same);
// the three variants share the audience about evenly.
func TestABSplitSendsEachRecipientOneVariant(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "r", 600, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Second))
	f.abCampaign(acct, c, "split", nil, 0, "", "A {{.Name}}", "B {{.Name}}", "")
	p := newFake(false)
	e := newExecutor(t, pool, p, Config{Tick: 50 * time.Millisecond, Workers: 8, BatchSize: 50, Poll: 20 * time.Millisecond})
	runUntil(t, e)
	waitSent(t, f, e, c)

	requireOneVariantEach(t, f, p, c, map[int16]string{1: "A ", 2: "B ", 3: "Hello "})
	require.Zero(t, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1
		AND variant <> 1 + mod(mod(hashtextextended(job_id, 1), 3) + 3, 3)`, c), "the variant is the job id's hash")
	for v := 1; v <= 3; v++ {
		n := f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND variant = $2 AND status = 'sent'`, c, v)
		require.InDelta(t, 200, n, 50, "variant %d", v)
	}
}

// TestABTestPhaseWinnerByClicksAcrossCrashes: a test campaign sends its test group
// (about 20 %) and nothing else until the winner; an executor killed during the
// test phase and another killed while the winner goes out leave nobody sent twice,
// nobody left out and everybody one variant. The winner is the variant more
// people clicked (bot clicks do not count), chosen once the wait has run out.
func TestABTestPhaseWinnerByClicksAcrossCrashes(t *testing.T) {
	t.Parallel()
	clk := newClock()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	acct := f.account("a")
	f.subscribers(acct, "r", 1000, "confirmed")
	id := f.campaign(acct, nil, "skip", clk.Now())
	percent := 20
	f.abCampaign(acct, id, "test", &percent, 3600, "clicks", "A {{.Name}}", "B {{.Name}}")
	p := newFake(true) // replays of one job id are dropped: exactly once across a crash
	cfg := Config{Now: clk.Now, Lease: 2 * time.Minute, Heartbeat: 2 * time.Second, MaxAttempts: 5,
		BackoffBase: time.Second, Workers: 100, BatchSize: 100}
	a, b, d := newExecutor(t, pool, p, cfg), newExecutor(t, pool, p, cfg), newExecutor(t, pool, p, cfg)
	a.beat(ctx)
	b.beat(ctx)
	d.beat(ctx)
	_, err := a.startDue(ctx)
	require.NoError(t, err)
	c := sendingCampaign(t, a, id)

	test := f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND variant IS NOT NULL`, id)
	require.InDelta(t, 200, test, 60, "the test group is about 20 %")
	require.Equal(t, 1000-test, f.int64(`SELECT count(*) FROM sends
		WHERE campaign_id = $1 AND variant IS NULL AND next_attempt_at = 'infinity'`, id), "the rest is held")

	// a claims the whole test group, sends half of it, and dies holding the rest.
	held, err := a.claim(ctx, c, 1000)
	require.NoError(t, err)
	require.Len(t, held, int(test), "only the test group is claimable")
	var res []result
	for _, r := range held[:len(held)/2] {
		res = append(res, a.send(ctx, job{campaign: c, row: r}))
	}
	a.flush(res)

	// b sees a dead after three silent heartbeats and takes its rows back.
	clk.Add(7 * time.Second)
	b.beat(ctx)
	d.beat(ctx)
	backdateOK(b, time.Minute)
	n, err := b.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, len(held)-len(held)/2, n)
	cb := sendingCampaign(t, b, id)
	drain := func(e *Executor, c *campaign) {
		for {
			rows, err := e.claim(ctx, c, 100)
			require.NoError(t, err)
			if len(rows) == 0 {
				return
			}
			var res []result
			for _, r := range rows {
				require.NotNil(t, r.Variant, "a claimed row always has its variant")
				res = append(res, e.send(ctx, job{campaign: c, row: r}))
			}
			e.flush(res)
		}
	}
	drain(b, cb)
	require.Len(t, p.delivered(), int(test), "nothing but the test group before the winner")
	require.False(t, b.finish(ctx, id), "the held rest keeps the campaign sending")
	require.NoError(t, b.abRound(ctx))
	require.Nil(t, f.nullInt(`SELECT ab_winner FROM campaigns WHERE id = $1`, id), "no winner before the wait ends")

	// People clicked B more; bots clicked A far more (the scanner filter drops them).
	f.exec(`INSERT INTO tracking_hits (account_id, campaign_id, send_id, kind, link_idx, occurred_at, method, suspected_bot)
		SELECT account_id, campaign_id, id, 'click', 1, now(), 'GET', variant = 1
		FROM sends WHERE campaign_id = $1 AND ((variant = 2 AND id % 5 = 0) OR variant = 1)`, id)
	clk.Add(time.Hour)
	b.beat(ctx)
	d.beat(ctx)
	require.NoError(t, b.abRound(ctx))
	require.Equal(t, int64(2), *f.nullInt(`SELECT ab_winner FROM campaigns WHERE id = $1`, id))
	require.Equal(t, int64(1), f.int64(`SELECT count(*) FROM events WHERE type = 'campaign.winner_chosen'
		AND (data->>'campaign_id')::bigint = $1 AND data->>'variant' = 'B'`, id))
	require.Zero(t, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND variant IS NULL`, id))

	// b dies while the winner goes out, holding a claim it never sent.
	cb = sendingCampaign(t, b, id)
	held, err = b.claim(ctx, cb, 100)
	require.NoError(t, err)
	require.Len(t, held, 100)
	res = nil
	for _, r := range held[:40] {
		res = append(res, b.send(ctx, job{campaign: cb, row: r}))
	}
	b.flush(res)
	clk.Add(7 * time.Second)
	d.beat(ctx)
	backdateOK(d, time.Minute)
	n, err = d.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, 60, n)
	cd := sendingCampaign(t, d, id)
	drain(d, cd)
	require.True(t, d.finish(ctx, id))
	require.Equal(t, "sent", f.status(id))
	require.Equal(t, map[string]int{"sent": 1000}, f.counts(id))
	requireOneVariantEach(t, f, p, id, map[int16]string{1: "A ", 2: "B "})
	require.Equal(t, test, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1
		AND mod(mod(hashtextextended(job_id, 0), 100) + 100, 100) < 20
		AND variant = 1 + mod(mod(hashtextextended(job_id, 1), 2) + 2, 2)`, id), "the test group kept its variants")
}

// TestABWinnerIsChosenOnce: the winner is a compare-and-set: a person's choice
// stands, a second choice (or the scheduler's pick) changes nothing, and a
// process killed between the choice and the release leaves the rest held until
// any executor's next round releases it, to that winner.
func TestABWinnerIsChosenOnce(t *testing.T) {
	t.Parallel()
	clk := newClock()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	acct := f.account("a")
	f.subscribers(acct, "r", 200, "confirmed")
	id := f.campaign(acct, nil, "skip", clk.Now())
	percent := 10
	f.abCampaign(acct, id, "test", &percent, 600, "opens", "A", "B", "C")
	e := newExecutor(t, pool, newFake(true), Config{Now: clk.Now})
	_, err := e.startDue(ctx)
	require.NoError(t, err)
	q := store.New(pool)
	set := func(v int16, by string) error {
		_, err := q.CampaignWinnerSet(ctx, store.CampaignWinnerSetParams{AccountID: acct, ID: id, Variant: v, ChosenBy: by})
		return err
	}
	require.Error(t, set(4, "manual"), "no variant D")
	require.NoError(t, set(3, "manual"))
	require.Error(t, set(1, "manual"), "already chosen")
	// Killed here: the winner is set, the rest still held.
	held := f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND next_attempt_at = 'infinity'`, id)
	require.Positive(t, held)
	clk.Add(time.Hour)
	require.NoError(t, e.abRound(ctx))
	require.Equal(t, int64(3), *f.nullInt(`SELECT ab_winner FROM campaigns WHERE id = $1`, id), "the person's choice stands")
	require.Equal(t, held, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND variant = 3
		AND next_attempt_at = '-infinity' AND mod(mod(hashtextextended(job_id, 0), 100) + 100, 100) >= 10`, id))
	require.Equal(t, int64(1), f.int64(`SELECT count(*) FROM events WHERE type = 'campaign.winner_chosen'`))
	f.exec(`UPDATE campaigns SET status = 'cancelled' WHERE id = $1`, id)
	for {
		n, err := q.SendSweepCancelled(ctx, store.SendSweepCancelledParams{AccountID: acct, CampaignID: id})
		require.NoError(t, err)
		if n == 0 {
			break
		}
	}
}

func (f fixture) nullInt(sql string, args ...any) *int64 {
	f.t.Helper()
	var n *int64
	require.NoError(f.t, f.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}
