package sequence_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/sequence"
)

// TestReentryAfterExit: with reentry after_exit, a trigger during a run changes
// nothing; one after the run ended, and at least reentry_after later, starts the
// next run, whose step sends have their own job ids (run 1's keep the old form),
// each sent once however often the advancer runs; an enrollment that ended by an
// opt-out is never started again.
func TestReentryAfterExit(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	d := welcome(tpl, sequence.Trigger{Type: sequence.TriggerEvent, Event: "order.placed"}, "1h")
	d.Reentry, d.ReentryAfterText = sequence.ReentryAfterExit, "2h"
	seq, err := e.svc.Create(e.ctx, acct, d)
	require.NoError(t, err)
	require.Equal(t, sequence.ReentryAfterExit, seq.Reentry)
	require.Equal(t, 2*time.Hour, seq.ReentryAfter)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	ada := e.subscriber(acct, "ada@example.com", 0)
	n := 0
	track := func() int {
		n++
		r, err := e.svc.Track(e.ctx, acct, "order-"+string(rune('a'+n)), "order.placed", "ada@example.com", map[string]any{"n": n})
		require.NoError(t, err)
		return r.Enrolled
	}

	require.Equal(t, 1, track())
	e.tick()
	require.Equal(t, 0, track(), "a trigger during the run changes nothing")
	e.clock.Add(time.Hour)
	e.tick()
	e.tick()
	state, _, _ := e.enrollment(seq.ID, ada)
	require.Equal(t, "completed", state)
	run1 := map[string]string{sequence.JobID(seq.ID, 0, ada): "queued", sequence.JobID(seq.ID, 2, ada): "queued"}
	require.Equal(t, run1, e.sends(seq.ID))

	e.clock.Add(time.Hour)
	require.Equal(t, 0, track(), "within reentry_after of the end: nothing")
	e.clock.Add(time.Hour)
	require.Equal(t, 1, track(), "a new trigger after the gap starts run 2")
	state, step, _ := e.enrollment(seq.ID, ada)
	require.Equal(t, "active", state)
	require.Zero(t, step)
	require.Equal(t, 0, track(), "run 2 is running: nothing")
	for range 3 {
		e.tick()
	}
	e.clock.Add(time.Hour)
	for range 3 {
		e.tick()
	}
	got := e.sends(seq.ID)
	require.Len(t, got, 4, "each step of each run once: %v", got)
	require.Contains(t, got, "sequence:"+itoa(seq.ID)+":0:"+itoa(ada)+":2")
	require.Contains(t, got, sequence.RunJobID(seq.ID, 2, ada, 2))
	require.Equal(t, sequence.JobID(seq.ID, 0, ada), sequence.RunJobID(seq.ID, 0, ada, 1))
	// Run 2's sends are rows of the steps' run-2 campaigns (a campaign has one row per subscriber).
	require.EqualValues(t, 2, e.int64(`SELECT count(DISTINCT s.campaign_id) FROM sends s JOIN sequence_steps st
		ON st.campaign_id = s.campaign_id WHERE st.sequence_id = $1 AND st.run = 2`, seq.ID))
	list, err := e.svc.Enrollments(e.ctx, acct, seq.ID, "ada@example.com", 0, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, 2, list[0].Run)
	require.Equal(t, 2, list[0].Timeline[len(list[0].Timeline)-1].Run)

	// An opt-out exit is final: not_confirmed is not re-entered.
	e.clock.Add(3 * time.Hour)
	require.Equal(t, 1, track()) // run 3
	e.exec(`UPDATE subscribers SET status = 'unsubscribed' WHERE id = $1`, ada)
	e.tick()
	state, _, reason := e.enrollment(seq.ID, ada)
	require.Equal(t, "exited", state)
	require.Equal(t, "not_confirmed", *reason)
	e.exec(`UPDATE subscribers SET status = 'confirmed' WHERE id = $1`, ada)
	e.clock.Add(3 * time.Hour)
	require.Equal(t, 0, track(), "an opt-out exit is never re-entered")
	require.Len(t, e.sends(seq.ID), 4)
}

// TestReentryNeverByDefault: without re-entry a completed enrollment is never
// started again.
func TestReentryNeverByDefault(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	seq, err := e.svc.Create(e.ctx, acct, sequence.Definition{Name: "once",
		Trigger: sequence.Trigger{Type: sequence.TriggerManual},
		Steps:   []sequence.Step{{Type: sequence.StepSend, TemplateID: e.template(acct), FromEmail: "a@example.com"}}})
	require.NoError(t, err)
	require.Equal(t, sequence.ReentryNever, seq.Reentry)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	sub := e.subscriber(acct, "ada@example.com", 0)
	_, created, err := e.svc.Enroll(e.ctx, acct, seq.ID, sub, "", nil)
	require.NoError(t, err)
	require.True(t, created)
	e.tick()
	e.clock.Add(24 * time.Hour)
	_, created, err = e.svc.Enroll(e.ctx, acct, seq.ID, sub, "", nil)
	require.NoError(t, err)
	require.False(t, created)
	e.tick()
	require.Len(t, e.sends(seq.ID), 1)
}

func TestReentryValidation(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	list := e.list(acct)
	for field, mutate := range map[string]func(d *sequence.Definition){
		"/reentry": func(d *sequence.Definition) { d.Reentry = "always" },
		"/reentry_after": func(d *sequence.Definition) {
			d.Reentry, d.ReentryAfterText = sequence.ReentryAfterExit, "soon"
		},
		"/reentry_after ": func(d *sequence.Definition) { d.ReentryAfterText = "1h" }, // reentry never
		"/reentry ": func(d *sequence.Definition) {
			d.Trigger = sequence.Trigger{Type: sequence.TriggerListJoined, ListID: &list}
			d.Reentry = sequence.ReentryAfterExit
		},
	} {
		d := welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h")
		mutate(&d)
		_, err := e.svc.Create(e.ctx, acct, d)
		var ae *apperr.Error
		require.ErrorAs(t, err, &ae, field)
		require.Equal(t, apperr.Invalid, ae.Code, field)
		require.Equal(t, strings.TrimSpace(field), ae.Fields[0].Pointer, "%s: %v", field, err)
	}
	require.Zero(t, e.int64(`SELECT count(*) FROM sequences`))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
