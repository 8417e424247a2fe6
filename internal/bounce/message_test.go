package bounce_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/transactional"
)

// TestMailboxAppliesAReportOnAMessage: a transactional message's send carries the
// VERP Return-Path of its send row (the executor names the row in the provider
// message, internal/sender makes the address of it), so a DSN a real MTA sends
// back for it maps to that message: its feedback is hard_bounce, its address is
// suppressed, and a campaign send of another account with the same address is
// untouched.
func TestMailboxAppliesAReportOnAMessage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.send(e.a, "pad@example.net") // send ids and message ids differ
	svc := transactional.NewService(e.pool, nil)
	subject, text := "Your receipt", "Thanks"
	m, created, err := svc.Send(e.ctx, e.a, "receipt-1", transactional.Request{To: "p.hard@example.net",
		From: "shop@example.com", Subject: &subject, Text: &text})
	require.NoError(t, err)
	require.True(t, created)
	var sendID int64
	require.NoError(t, e.pool.QueryRow(e.ctx, `UPDATE sends SET status = 'sent', sent_at = now()
		WHERE job_id = $1 RETURNING id`, transactional.JobID(e.a, "receipt-1")).Scan(&sendID))
	require.NotEqual(t, m.ID, sendID)
	other := e.send(e.b, "p.hard@example.net")

	e.deliver(e.fixture("postfix-hard.eml", "bounces+zzverptokenzz@bounce.example.test",
		e.verp.Address(e.a, sendID, "bounce.example.test")))
	res, err := e.svc.Poll(e.ctx, e.a)
	require.NoError(t, err)
	require.Equal(t, 1, res.Outcomes["hard_bounce"], "%v", res.Outcomes)
	got, err := svc.Get(e.ctx, e.a, m.ID)
	require.NoError(t, err)
	require.NotNil(t, got.Feedback)
	require.Equal(t, "hard_bounce", *got.Feedback)
	require.Equal(t, "hard_bounce", e.suppressed(e.a, "p.hard@example.net"))
	require.Equal(t, "", e.suppressed(e.b, "p.hard@example.net"))
	require.Equal(t, "", e.feedback(other))
}
