package sequence_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/sequence"
)

// TestBadDateStallsNoOne: a date no timestamp can hold (year 300000) in one
// tenant's subscriber attributes neither stops that tenant's date sequence for its
// other subscribers nor holds up another tenant's sequences; and a sweep that fails
// outright (a time zone PostgreSQL does not know, written behind the API's back)
// fails alone: every other sweep and every advance goes on.
func TestBadDateStallsNoOne(t *testing.T) {
	e := setup(t) // the clock starts at 2030-01-07 08:00 UTC
	a := e.account("a")
	b := e.account("b")
	tplA, tplB := e.template(a), e.template(b)
	dated, err := e.svc.Create(e.ctx, a, sequence.Definition{Name: "visit reminder",
		Trigger: sequence.Trigger{Type: sequence.TriggerDate, Attribute: "visit_date", OffsetDays: 1, At: "10:00"},
		Steps:   []sequence.Step{{Type: sequence.StepSend, TemplateID: tplA, FromEmail: "clinic@example.com"}}})
	require.NoError(t, err)
	far := e.subscriber(a, "far@example.com", 0)
	near := e.subscriber(a, "near@example.com", 0)
	e.exec(`UPDATE subscribers SET attributes = jsonb_build_object('visit_date', v) FROM (VALUES
		($1::bigint, '300000-01-01'), ($2::bigint, '2030-01-06')) x(id, v) WHERE subscribers.id = x.id`, far, near)
	_, err = e.svc.Transition(e.ctx, a, dated.ID, sequence.Activate)
	require.NoError(t, err)
	broken, err := e.svc.Create(e.ctx, a, sequence.Definition{Name: "broken",
		Trigger: sequence.Trigger{Type: sequence.TriggerDate, Attribute: "visit_date", OffsetDays: 1, At: "10:00"},
		Steps:   []sequence.Step{{Type: sequence.StepSend, TemplateID: tplA, FromEmail: "clinic@example.com"}}})
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, a, broken.ID, sequence.Activate)
	require.NoError(t, err)
	e.exec(`UPDATE sequences SET time_zone = 'Mars/Olympus' WHERE id = $1`, broken.ID)

	manual, err := e.svc.Create(e.ctx, b, welcome(tplB, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, b, manual.ID, sequence.Activate)
	require.NoError(t, err)
	ada := e.subscriber(b, "ada@example.com", 0)
	_, enrolled, err := e.svc.Enroll(e.ctx, b, manual.ID, ada, "", nil)
	require.NoError(t, err)
	require.True(t, enrolled)

	_, err = e.adv.Tick(e.ctx)
	require.Error(t, err, "the broken sweep is reported")
	require.Equal(t, map[string]string{sequence.JobID(manual.ID, 0, ada): "queued"}, e.sends(manual.ID),
		"another tenant's sequence advances")
	e.clock.Add(2 * time.Hour) // near's moment: 2030-01-07 10:00 UTC
	_, _ = e.adv.Tick(e.ctx)
	_, _ = e.adv.Tick(e.ctx)
	require.Equal(t, map[string]string{sequence.JobID(dated.ID, 0, near): "queued"}, e.sends(dated.ID),
		"the tenant's other subscriber is enrolled and sent")
}
