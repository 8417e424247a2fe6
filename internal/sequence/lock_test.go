package sequence_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/sequence"
)

// TestAdvancerNeverWaitsOnAnOptOut: an opt-out in progress holds the membership
// and then takes the subscriber row; the advancer, evaluating a send step of that
// subscriber meanwhile, must not wait on the opt-out's locks (a wait would close a
// cycle: the chaos run's opt-out wave died with "deadlock detected"). It leaves
// the enrollment to the next tick; once the opt-out commits, the step exits with
// left_list and nothing is queued.
func TestAdvancerNeverWaitsOnAnOptOut(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl, list := e.template(acct), e.list(acct)
	seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerListJoined, ListID: &list}, "1h"))
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	e.clock.Add(time.Second)
	sub := e.subscriber(acct, "o@example.com", list)
	e.tick()
	e.clock.Add(2 * time.Hour)

	optout, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	defer func() { _ = optout.Rollback(e.ctx) }()
	_, err = optout.Exec(e.ctx, `UPDATE list_members SET status = 'unsubscribed' WHERE subscriber_id = $1`, sub)
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() { _, err := e.adv.Tick(e.ctx); done <- err }()
	// The opt-out goes on to change the subscriber row, as a full unsubscribe does;
	// an advancer holding it FOR SHARE while waiting for the membership would
	// deadlock with this.
	_, err = optout.Exec(e.ctx, `UPDATE subscribers SET status = 'unsubscribed' WHERE id = $1`, sub)
	require.NoError(t, err, "the opt-out must not be chosen as a deadlock victim")
	require.NoError(t, <-done)
	require.NoError(t, optout.Commit(e.ctx))
	require.Len(t, e.sends(seq.ID), 1, "step 2 not queued while the opt-out was in progress")

	e.clock.Add(2 * time.Second)
	e.tick()
	require.Len(t, e.sends(seq.ID), 1)
	state, _, reason := e.enrollment(seq.ID, sub)
	require.Equal(t, "exited", state)
	require.Contains(t, []string{"left_list", "not_confirmed"}, *reason)
}
