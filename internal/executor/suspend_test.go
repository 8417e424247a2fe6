package executor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/store"
)

// TestSuspendedAccountStopsClaimsResumeContinues: an account suspended in the
// middle of a campaign gives out no new work (its campaign leaves the rotation and
// a claim already dealt finds nothing), what was in flight is acknowledged, and
// after the resume the campaign goes on from where it stopped: every recipient
// delivered exactly once, none lost. Another account's campaign is not held.
func TestSuspendedAccountStopsClaimsResumeContinues(t *testing.T) {
	t.Parallel()
	clk := newClock()
	fake := newFake(true)
	f, e, c := started(t, 10, "skip", fake, clk)
	ctx := context.Background()
	other := f.account("other")
	f.subscribers(other, "o", 3, "confirmed")
	otherID := f.campaign(other, nil, "skip", clk.Now())
	_, err := e.startDue(ctx)
	require.NoError(t, err)

	sendAll := func(rows []store.SendClaimBatchRow) {
		var res []result
		for _, r := range rows {
			res = append(res, e.send(ctx, job{campaign: c, row: r}))
		}
		e.flush(res)
	}
	done, err := e.claim(ctx, c, 3)
	require.NoError(t, err)
	sendAll(done)
	inFlight, err := e.claim(ctx, c, 2)
	require.NoError(t, err)
	require.Len(t, inFlight, 2)

	f.exec(`UPDATE accounts SET suspended_at = now() WHERE id = $1`, c.AccountID)
	rows, err := e.claim(ctx, c, 10)
	require.NoError(t, err)
	require.Empty(t, rows, "a suspended account's campaign gives out no new work")
	d := &dealer{byID: map[int64]*campaign{}}
	require.NoError(t, e.refresh(ctx, d))
	require.Nil(t, d.byID[c.ID], "nor is it dealt")
	require.NotNil(t, d.byID[otherID], "another account's campaign is")
	sendAll(inFlight) // what was in flight finishes
	require.False(t, e.finish(ctx, c.ID))
	require.Equal(t, map[string]int{"sent": 5, "queued": 5}, f.counts(c.ID))

	f.exec(`UPDATE accounts SET suspended_at = NULL WHERE id = $1`, c.AccountID)
	c = sendingCampaign(t, e, c.ID)
	rest, err := e.claim(ctx, c, 10)
	require.NoError(t, err)
	require.Len(t, rest, 5, "the resume takes up exactly the rows left")
	sendAll(rest)
	require.True(t, e.finish(ctx, c.ID))
	require.Equal(t, map[string]int{"sent": 10}, f.counts(c.ID))
	calls, _, _ := fake.snapshot() // every call, not only the provider's deduplicated view
	for _, r := range append(append(done, inFlight...), rest...) {
		require.Equal(t, 1, calls[r.JobID], r.Email)
	}
	require.Len(t, calls, 10)
}
