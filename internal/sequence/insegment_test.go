package sequence_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/sequence"
)

// TestInSegmentCondition: a condition step on a segment exits the subscribers the
// segment holds when the step is reached, and lets the others on to the send.
func TestInSegmentCondition(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	seg := e.proSegment(acct)
	d := sequence.Definition{Name: "upsell", Trigger: sequence.Trigger{Type: sequence.TriggerManual}, Steps: []sequence.Step{
		{Type: sequence.StepCondition, If: &sequence.Condition{InSegment: &seg}},
		{Type: sequence.StepSend, TemplateID: e.template(acct), FromEmail: "shop@example.com"},
	}}
	seq, err := e.svc.Create(e.ctx, acct, d)
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	pro := e.subscriber(acct, "pro@example.com", 0)
	free := e.subscriber(acct, "free@example.com", 0)
	e.exec(`UPDATE subscribers SET attributes = '{"plan": "pro"}' WHERE id = $1`, pro)
	e.exec(`UPDATE subscribers SET attributes = '{"plan": "free"}' WHERE id = $1`, free)
	for _, s := range []int64{pro, free} {
		_, _, err := e.svc.Enroll(e.ctx, acct, seq.ID, s, "", nil)
		require.NoError(t, err)
	}
	e.tick()
	state, _, reason := e.enrollment(seq.ID, pro)
	require.Equal(t, "exited", state)
	require.Equal(t, "condition", *reason)
	require.Equal(t, map[string]string{sequence.JobID(seq.ID, 1, free): "queued"}, e.sends(seq.ID))
}
