package sequence_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestWelcomeSeriesEveryStepOnce: a list-triggered series sends each step once
// per subscriber; a second sweep, an explicit enroll and repeated ticks add nothing.
func TestWelcomeSeriesEveryStepOnce(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl, list := e.template(acct), e.list(acct)
	seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerListJoined, ListID: &list}, "1h"))
	require.NoError(t, err)
	before := e.subscriber(acct, "before@example.com", list) // joined before activation: not enrolled
	e.clock.Add(time.Second)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	e.clock.Add(time.Second)
	var subs []int64
	for _, m := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		subs = append(subs, e.subscriber(acct, m, list))
	}
	e.tick()
	got := e.sends(seq.ID)
	require.Len(t, got, 3)
	for _, s := range subs {
		require.Equal(t, "queued", got[sequence.JobID(seq.ID, 0, s)])
	}
	require.NotContains(t, got, sequence.JobID(seq.ID, 0, before))

	// Re-trigger: explicit enroll and another sweep find the enrollment.
	_, enrolled, err := e.svc.Enroll(e.ctx, acct, seq.ID, subs[0], "", nil)
	require.NoError(t, err)
	require.False(t, enrolled)
	e.tick()
	e.clock.Add(59 * time.Minute)
	e.tick()
	require.Len(t, e.sends(seq.ID), 3, "the wait has not ended")
	e.clock.Add(time.Minute)
	e.tick()
	e.tick()
	got = e.sends(seq.ID)
	require.Len(t, got, 6)
	for _, s := range subs {
		require.Contains(t, got, sequence.JobID(seq.ID, 2, s))
		state, _, _ := e.enrollment(seq.ID, s)
		require.Equal(t, "completed", state)
	}
	require.Equal(t, int64(6), e.int64(`SELECT count(*) FROM events WHERE type = 'sequence.step_sent'`))
	require.Equal(t, int64(3), e.int64(`SELECT count(*) FROM events WHERE type = 'sequence.exited' AND data->>'reason' = 'completed'`))

	st, err := e.svc.Stats(e.ctx, acct, seq.ID)
	require.NoError(t, err)
	require.Equal(t, int64(3), st.Steps[0].Outcomes["sent"])
	require.Equal(t, int64(3), st.Steps[0].Sends["queued"])
	require.Equal(t, int64(3), st.Enrollments["completed"])
}

// TestRerunAfterCrashDoesNotDuplicate: a step whose send row exists (queued by a
// run whose enrollment update was lost) is not queued again when the enrollment
// is evaluated again; the enrollment moves on.
func TestRerunAfterCrashDoesNotDuplicate(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	sub := e.subscriber(acct, "x@example.com", 0)
	_, ok, err := e.svc.Enroll(e.ctx, acct, seq.ID, 0, "X@example.com", nil)
	require.NoError(t, err)
	require.True(t, ok)
	camp := e.int64(`SELECT campaign_id FROM sequence_steps WHERE sequence_id = $1 AND position = 0`, seq.ID)
	now := time.Now()
	testfactory.New(e.pool).Send(t, acct, camp, sub, testfactory.Send{Email: "x@example.com", JobID: sequence.JobID(seq.ID, 0, sub),
		Status: "sent", Attempts: 1, SentAt: &now})
	e.tick()
	require.Equal(t, map[string]string{sequence.JobID(seq.ID, 0, sub): "sent"}, e.sends(seq.ID))
	_, step, _ := e.enrollment(seq.ID, sub)
	require.Equal(t, 1, step)
}

// TestPauseHoldsStepsAndSends: a paused sequence neither advances nor has its
// queued sends claimable (its step campaigns are paused); resuming continues.
func TestPauseHoldsStepsAndSends(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	sub := e.subscriber(acct, "p@example.com", 0)
	_, _, err = e.svc.Enroll(e.ctx, acct, seq.ID, sub, "", nil)
	require.NoError(t, err)
	e.tick()
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Pause)
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Pause)
	require.True(t, apperr.Is(err, apperr.Conflict), "pausing twice is 409: %v", err)
	require.Equal(t, int64(2), e.int64(`SELECT count(*) FROM campaigns c JOIN sequence_steps st ON st.campaign_id = c.id
		WHERE st.sequence_id = $1 AND c.status = 'paused'`, seq.ID))
	e.clock.Add(2 * time.Hour)
	e.tick()
	require.Len(t, e.sends(seq.ID), 1)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Resume)
	require.NoError(t, err)
	e.tick()
	require.Len(t, e.sends(seq.ID), 2)
}

// TestOptOutMidWait: a subscriber who leaves the sequence's list during a wait is
// not sent the next step; the enrollment exits with the reason. A queued send of
// that list is marked suppressed by the opt-out (SendSuppressLeftLists).
func TestOptOutMidWait(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl, list := e.template(acct), e.list(acct)
	seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerListJoined, ListID: &list}, "1d"))
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	e.clock.Add(time.Second)
	stay := e.subscriber(acct, "stay@example.com", list)
	leave := e.subscriber(acct, "leave@example.com", list)
	e.tick()
	e.exec(`UPDATE list_members SET status = 'unsubscribed' WHERE subscriber_id = $1`, leave)
	e.clock.Add(25 * time.Hour)
	e.tick()
	got := e.sends(seq.ID)
	require.Contains(t, got, sequence.JobID(seq.ID, 2, stay))
	require.NotContains(t, got, sequence.JobID(seq.ID, 2, leave))
	state, _, reason := e.enrollment(seq.ID, leave)
	require.Equal(t, "exited", state)
	require.Equal(t, "left_list", *reason)
	require.Equal(t, int64(1), e.int64(`SELECT count(*) FROM events WHERE type = 'sequence.exited' AND data->>'reason' = 'left_list'`))
}

// TestLateStepSkipped: a send step reached longer than late_after after it fell
// due (the advancer was down) is skipped, not sent late.
func TestLateStepSkipped(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	d := welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h")
	d.LateAfterText = "30m"
	seq, err := e.svc.Create(e.ctx, acct, d)
	require.NoError(t, err)
	require.Equal(t, 30*time.Minute, seq.LateAfter)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	sub := e.subscriber(acct, "l@example.com", 0)
	_, _, err = e.svc.Enroll(e.ctx, acct, seq.ID, sub, "", nil)
	require.NoError(t, err)
	e.tick()
	e.clock.Add(4 * time.Hour) // down for three hours after the wait ended
	e.tick()
	got := e.sends(seq.ID)
	require.Len(t, got, 1)
	require.NotContains(t, got, sequence.JobID(seq.ID, 2, sub))
	list, err := e.svc.Enrollments(e.ctx, acct, seq.ID, "L@example.com", 0, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	var skipped bool
	for _, l := range list[0].Timeline {
		if l.Step == 2 && l.Outcome == "skipped" {
			skipped = true
			require.Contains(t, *l.Reason, "late")
		}
	}
	require.True(t, skipped, "%+v", list[0].Timeline)
	require.Equal(t, "completed", list[0].State)
}

// TestWaitForEventAndTrack: /track enrolls by event, is idempotent by its id, and
// wakes a waiting enrollment, which takes the on_event branch; a data condition
// reads the event's data.
func TestWaitForEventAndTrack(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	d := sequence.Definition{Name: "cart", Trigger: sequence.Trigger{Type: sequence.TriggerEvent, Event: "cart.abandoned"},
		Steps: []sequence.Step{
			{Type: sequence.StepCondition, If: &sequence.Condition{Data: `$.total < 10`}},
			{Type: sequence.StepWaitForEvent, Event: "order.placed", Timeout: "1d", OnEvent: "exit"},
			{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "shop@example.com"},
		}}
	seq, err := e.svc.Create(e.ctx, acct, d)
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	buyer := e.subscriber(acct, "buyer@example.com", 0)
	idle := e.subscriber(acct, "idle@example.com", 0)
	small := e.subscriber(acct, "small@example.com", 0)
	for i, m := range []string{"buyer@example.com", "idle@example.com", "small@example.com"} {
		total := 50
		if i == 2 {
			total = 5
		}
		r, err := e.svc.Track(e.ctx, acct, "cart-"+m, "cart.abandoned", m, map[string]any{"total": total})
		require.NoError(t, err)
		require.Equal(t, 1, r.Enrolled)
	}
	r, err := e.svc.Track(e.ctx, acct, "cart-idle@example.com", "cart.abandoned", "idle@example.com", nil)
	require.NoError(t, err)
	require.True(t, r.Replayed)
	require.Equal(t, 1, r.Enrolled)
	e.tick()
	state, _, reason := e.enrollment(seq.ID, small)
	require.Equal(t, "exited", state)
	require.Equal(t, "condition", *reason)
	e.clock.Add(time.Hour)
	r, err = e.svc.Track(e.ctx, acct, "order-1", "order.placed", "buyer@example.com", nil)
	require.NoError(t, err)
	require.Equal(t, 1, r.Woke)
	e.tick()
	state, _, reason = e.enrollment(seq.ID, buyer)
	require.Equal(t, "exited", state)
	require.Equal(t, "event_received", *reason)
	e.clock.Add(24 * time.Hour)
	e.tick()
	got := e.sends(seq.ID)
	require.Equal(t, map[string]string{sequence.JobID(seq.ID, 2, idle): "queued"}, got)
}

// TestExclusionsRecorded: a suppressed or unconfirmed subscriber is not sent a
// step; the enrollment records why.
func TestExclusionsRecorded(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	supp := e.subscriber(acct, "s@example.com", 0)
	pend := e.subscriber(acct, "p@example.com", 0)
	testfactory.New(e.pool).Suppression(t, acct, "s@example.com", "complaint", "")
	e.exec(`UPDATE subscribers SET status = 'unsubscribed' WHERE id = $1`, pend)
	for _, s := range []int64{supp, pend} {
		_, _, err = e.svc.Enroll(e.ctx, acct, seq.ID, s, "", nil)
		require.NoError(t, err)
	}
	e.tick()
	require.Empty(t, e.sends(seq.ID))
	_, _, r1 := e.enrollment(seq.ID, supp)
	_, _, r2 := e.enrollment(seq.ID, pend)
	require.Equal(t, "suppressed", *r1)
	require.Equal(t, "not_confirmed", *r2)
}

// TestSequenceTenantIsolation: another account's sequence is not found by any
// method, and its ids cannot be named in a definition.
func TestSequenceTenantIsolation(t *testing.T) {
	e := setup(t)
	a, b := e.account("a"), e.account("b")
	tplA := e.template(a)
	_ = e.template(b)
	seq, err := e.svc.Create(e.ctx, a, welcome(tplA, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.NoError(t, err)
	subB := e.subscriber(b, "b@example.com", 0)
	_, err = e.svc.Get(e.ctx, b, seq.ID)
	require.True(t, apperr.Is(err, apperr.NotFound))
	_, err = e.svc.Transition(e.ctx, b, seq.ID, sequence.Activate)
	require.True(t, apperr.Is(err, apperr.NotFound))
	_, err = e.svc.Update(e.ctx, b, seq.ID, welcome(tplA, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.True(t, apperr.Is(err, apperr.Invalid), "B cannot name A's template: %v", err)
	require.True(t, apperr.Is(e.svc.Delete(e.ctx, b, seq.ID), apperr.NotFound))
	_, _, err = e.svc.Enroll(e.ctx, b, seq.ID, subB, "", nil)
	require.True(t, apperr.Is(err, apperr.NotFound))
	_, err = e.svc.Enrollments(e.ctx, b, seq.ID, "", 0, 10)
	require.True(t, apperr.Is(err, apperr.NotFound))
	_, err = e.svc.Stats(e.ctx, b, seq.ID)
	require.True(t, apperr.Is(err, apperr.NotFound))
	_, err = e.svc.Create(e.ctx, b, welcome(tplA, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.True(t, apperr.Is(err, apperr.Invalid))
	// A's sequence cannot enroll B's subscriber.
	_, err = e.svc.Transition(e.ctx, a, seq.ID, sequence.Activate)
	require.NoError(t, err)
	_, _, err = e.svc.Enroll(e.ctx, a, seq.ID, subB, "", nil)
	require.True(t, apperr.Is(err, apperr.Invalid))
	// B's tracked event with A's event name enrolls nothing in A's sequence.
	require.Equal(t, int64(0), e.int64(`SELECT count(*) FROM sequence_enrollments`))
}

// TestSequenceValidation: each bad field is a 422 naming it, and nothing is stored.
func TestSequenceValidation(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	good := func() sequence.Definition {
		return welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h")
	}
	cases := map[string]func(d *sequence.Definition){
		"/name":         func(d *sequence.Definition) { d.Name = " " },
		"/trigger/type": func(d *sequence.Definition) { d.Trigger.Type = "cron" },
		"/trigger/list_id": func(d *sequence.Definition) {
			d.Trigger = sequence.Trigger{Type: sequence.TriggerListJoined, ListID: ptr(int64(999999))}
		},
		"/trigger/event":       func(d *sequence.Definition) { d.Trigger = sequence.Trigger{Type: sequence.TriggerEvent} },
		"/time_zone":           func(d *sequence.Definition) { d.TimeZone = "Mars/Olympus" },
		"/late_after":          func(d *sequence.Definition) { d.LateAfterText = "-5m" },
		"/steps":               func(d *sequence.Definition) { d.Steps = nil },
		"/steps/0/template_id": func(d *sequence.Definition) { d.Steps[0].TemplateID = 999999 },
		"/steps/0/from_email":  func(d *sequence.Definition) { d.Steps[0].FromEmail = "nope" },
		"/steps/0/sender_id":   func(d *sequence.Definition) { d.Steps[0].SenderID = ptr(int64(999999)) },
		"/steps/1/duration":    func(d *sequence.Definition) { d.Steps[1].Duration = "400d" },
		"/steps/1/type":        func(d *sequence.Definition) { d.Steps[1].Type = "sleep" },
		"/steps/1/at":          func(d *sequence.Definition) { d.Steps[1].At = "25:00" },
		"/steps/1/weekdays/0":  func(d *sequence.Definition) { d.Steps[1].Weekdays = []string{"funday"} },
		"/steps/1/if/clicked/step": func(d *sequence.Definition) { // itself, not an earlier send step
			d.Steps[1] = sequence.Step{Type: sequence.StepCondition, If: &sequence.Condition{Clicked: &sequence.ClickedCondition{Step: 1}}}
		},
		"/steps/1/if/data": func(d *sequence.Definition) {
			d.Steps[1] = sequence.Step{Type: sequence.StepCondition, If: &sequence.Condition{Data: "$.a ==="}}
		},
		"/steps/1/if/in_segment": func(d *sequence.Definition) {
			d.Steps[1] = sequence.Step{Type: sequence.StepCondition, If: &sequence.Condition{InSegment: ptr(int64(999999))}}
		},
		"/steps/1/timeout": func(d *sequence.Definition) { d.Steps[1] = sequence.Step{Type: sequence.StepWaitForEvent, Event: "x"} },
		"/steps/1/on_event": func(d *sequence.Definition) {
			d.Steps[1] = sequence.Step{Type: sequence.StepWaitForEvent, Event: "x", Timeout: "1h", OnEvent: "jump"}
		},
		"/steps/0/duration": func(d *sequence.Definition) { d.Steps[0].Duration = "1h" },
	}
	for field, mutate := range cases {
		d := good()
		mutate(&d)
		_, err := e.svc.Create(e.ctx, acct, d)
		var ae *apperr.Error
		require.ErrorAs(t, err, &ae, field)
		require.Equal(t, apperr.Invalid, ae.Code, field)
		require.Equal(t, field, ae.Fields[0].Pointer, "%s: %v", field, err)
	}
	require.Equal(t, int64(0), e.int64(`SELECT count(*) FROM sequences`))
}

// TestDateAttributeTrigger: a subscriber is enrolled once, due at their date plus
// the offset at the time of day in the sequence's zone; a malformed or missing
// date enrolls nobody, and a date already past at activation is not sent.
func TestDateAttributeTrigger(t *testing.T) {
	e := setup(t) // the clock starts at 2030-01-07 08:00 UTC
	acct := e.account("a")
	tpl := e.template(acct)
	d := sequence.Definition{Name: "visit reminder", TimeZone: "Europe/Paris",
		Trigger: sequence.Trigger{Type: sequence.TriggerDate, Attribute: "visit_date", OffsetDays: -1, At: "10:00"},
		Steps:   []sequence.Step{{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "clinic@example.com"}}}
	seq, err := e.svc.Create(e.ctx, acct, d)
	require.NoError(t, err)
	require.Equal(t, "visit_date", seq.Trigger.Attribute)
	soon := e.subscriber(acct, "soon@example.com", 0)
	later := e.subscriber(acct, "later@example.com", 0)
	bad := e.subscriber(acct, "bad@example.com", 0)
	past := e.subscriber(acct, "past@example.com", 0)
	e.exec(`UPDATE subscribers SET attributes = jsonb_build_object('visit_date', v) FROM (VALUES
		($1::bigint, '2030-01-08'), ($2::bigint, '2030-01-20'), ($3::bigint, '2030-02-30'), ($4::bigint, '2030-01-07')) x(id, v)
		WHERE subscribers.id = x.id`, soon, later, bad, past)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	e.tick()
	// soon: 2030-01-07 10:00 Paris = 09:00 UTC, an hour ahead: enrolled, waiting.
	require.Equal(t, int64(1), e.int64(`SELECT count(*) FROM sequence_enrollments`))
	require.Equal(t, int64(1), e.int64(`SELECT count(*) FROM sequence_enrollments WHERE subscriber_id = $1
		AND due_at = '2030-01-07 09:00:00+00'`, soon))
	require.Empty(t, e.sends(seq.ID))
	e.clock.Add(time.Hour)
	e.tick()
	require.Equal(t, map[string]string{sequence.JobID(seq.ID, 0, soon): "queued"}, e.sends(seq.ID))
	e.clock.Add(13 * 24 * time.Hour) // later's moment: 2030-01-19 09:00 UTC
	e.tick()
	e.clock.Add(time.Minute)
	e.tick()
	got := e.sends(seq.ID)
	require.Len(t, got, 2)
	require.Contains(t, got, sequence.JobID(seq.ID, 0, later))
	_, err = e.svc.Create(e.ctx, acct, sequence.Definition{Name: "x",
		Trigger: sequence.Trigger{Type: sequence.TriggerDate, Attribute: "visit-date"}, Steps: d.Steps})
	require.True(t, apperr.Is(err, apperr.Invalid))
}

// TestDateAttributeTriggerSubscriberTimeZone: the time of day of a date trigger is
// the subscriber's, in attributes.timezone when PostgreSQL knows that zone, as a
// wait's is; otherwise (absent, unknown, not a string) the sequence's.
func TestDateAttributeTriggerSubscriberTimeZone(t *testing.T) {
	e := setup(t) // the clock starts at 2030-01-07 08:00 UTC
	acct := e.account("a")
	tpl := e.template(acct)
	seq, err := e.svc.Create(e.ctx, acct, sequence.Definition{Name: "visit reminder", TimeZone: "Europe/Paris",
		Trigger: sequence.Trigger{Type: sequence.TriggerDate, Attribute: "visit_date", OffsetDays: -1, At: "10:00"},
		Steps:   []sequence.Step{{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "clinic@example.com"}}})
	require.NoError(t, err)
	ny := e.subscriber(acct, "ny@example.com", 0)
	mars := e.subscriber(acct, "mars@example.com", 0)
	num := e.subscriber(acct, "num@example.com", 0)
	e.exec(`UPDATE subscribers SET attributes = jsonb_build_object('visit_date', '2030-01-08', 'timezone', tz) FROM (VALUES
		($1::bigint, '"America/New_York"'::jsonb), ($2::bigint, '"Mars/Olympus"'::jsonb), ($3::bigint, '42'::jsonb)) x(id, tz)
		WHERE subscribers.id = x.id`, ny, mars, num)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	e.tick()
	due := func(sub int64) string {
		return e.str(`SELECT to_char(due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') FROM sequence_enrollments WHERE subscriber_id = $1`, sub)
	}
	require.Equal(t, "2030-01-07 15:00", due(ny), "10:00 in New York")
	require.Equal(t, "2030-01-07 09:00", due(mars), "an unknown zone: 10:00 in the sequence's Paris")
	require.Equal(t, "2030-01-07 09:00", due(num), "a zone that is not a string: the sequence's")
}

// TestActivateWithDeletedTemplate: a template deleted after the sequence was saved
// makes activation a 422 naming the step, and the sequence stays a draft.
func TestActivateWithDeletedTemplate(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.NoError(t, err)
	e.exec(`DELETE FROM templates WHERE id = $1`, tpl)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	var ae *apperr.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "/steps/0/template_id", ae.Fields[0].Pointer)
	got, err := e.svc.Get(e.ctx, acct, seq.ID)
	require.NoError(t, err)
	require.Equal(t, sequence.StatusDraft, got.Status)
}
