package sequence_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestClickedCondition: a condition on a step's clicks is true for a subscriber
// with a human click on that step's send, not for a suspected bot's click or the
// honeypot link; the step campaign stores its tracked links (the redirect answers
// with them), and an edit that changes them turns the step's tracking off rather
// than renumbering links already sent.
func TestClickedCondition(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := testfactory.New(e.pool).Template(t, acct, testfactory.Template{Name: "offer", Subject: "Offer",
		HTML: `<p><a href="https://example.com/offer">See the offer</a></p>`})
	d := sequence.Definition{Name: "offer", Trigger: sequence.Trigger{Type: sequence.TriggerManual}, Steps: []sequence.Step{
		{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "shop@example.com"},
		{Type: sequence.StepWait, Duration: "1d"},
		{Type: sequence.StepCondition, If: &sequence.Condition{Clicked: &sequence.ClickedCondition{Step: 0}}},
		{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "shop@example.com"},
	}}
	seq, err := e.svc.Create(e.ctx, acct, d)
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	step0 := e.int64(`SELECT campaign_id FROM sequence_steps WHERE sequence_id = $1 AND position = 0`, seq.ID)
	require.Equal(t, "https://example.com/offer", e.text(`SELECT string_agg(url, ' ') FROM tracked_links WHERE campaign_id = $1`, step0))

	human := e.subscriber(acct, "human@example.com", 0)
	bot := e.subscriber(acct, "bot@example.com", 0)
	honeypot := e.subscriber(acct, "honeypot@example.com", 0)
	idle := e.subscriber(acct, "idle@example.com", 0)
	for _, s := range []int64{human, bot, honeypot, idle} {
		_, _, err := e.svc.Enroll(e.ctx, acct, seq.ID, s, "", nil)
		require.NoError(t, err)
	}
	e.tick()
	require.Len(t, e.sends(seq.ID), 4)
	hit := func(sub int64, link int32, suspected bool) {
		var campaign, send int64
		require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT campaign_id, id FROM sends WHERE job_id = $1`,
			sequence.JobID(seq.ID, 0, sub)).Scan(&campaign, &send))
		testfactory.New(e.pool).TrackingHit(t, acct, campaign, send, testfactory.TrackingHit{Kind: "click", Link: link,
			At: e.clock.Now(), SuspectedBot: suspected})
	}
	hit(human, 1, false)
	hit(bot, 1, true)
	hit(honeypot, 0, false)
	e.clock.Add(24 * time.Hour)
	e.tick()
	state, _, reason := e.enrollment(seq.ID, human)
	require.Equal(t, "exited", state)
	require.Equal(t, "condition", *reason)
	for _, s := range []int64{bot, honeypot, idle} {
		state, _, _ := e.enrollment(seq.ID, s)
		require.Equal(t, "completed", state, "subscriber %d", s)
	}
	got := e.sends(seq.ID)
	require.Len(t, got, 7)
	require.NotContains(t, got, sequence.JobID(seq.ID, 3, human))

	// An edit that changes the step's links keeps the stored ones and stops tracking.
	e.exec(`UPDATE templates SET html = '<p><a href="https://example.com/new">New</a></p>' WHERE id = $1`, tpl)
	_, err = e.svc.Update(e.ctx, acct, seq.ID, d)
	require.NoError(t, err)
	require.Equal(t, "https://example.com/offer", e.text(`SELECT string_agg(url, ' ') FROM tracked_links WHERE campaign_id = $1`, step0))
	require.Equal(t, "false", e.text(`SELECT track_clicks::text FROM campaigns WHERE id = $1`, step0))
}

func (e *env) text(sql string, args ...any) string {
	e.t.Helper()
	var s string
	require.NoError(e.t, e.pool.QueryRow(e.ctx, sql, args...).Scan(&s))
	return s
}
