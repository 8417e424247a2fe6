package sequence_test

import (
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestConcurrentAdvancersEachStepOnce: four advancers (replicas) on one database
// take disjoint enrollments (SKIP LOCKED); every step is queued exactly once.
func TestConcurrentAdvancersEachStepOnce(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	const n = 60
	fx := testfactory.New(e.pool)
	fx.Subscribers(t, acct, "s", n, "confirmed")
	fx.EnrollEveryone(t, acct, seq.ID, e.clock.Now())
	run := func() {
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := &sequence.Advancer{Pool: e.pool, Now: e.clock.Now, Batch: 5}
				_, err := a.Tick(e.ctx)
				require.NoError(t, err)
			}()
		}
		wg.Wait()
	}
	run()
	e.clock.Add(time.Hour)
	run()
	run()
	require.Len(t, e.sends(seq.ID), 2*n)
	require.Equal(t, int64(2*n), e.int64(`SELECT count(*) FROM sequence_step_log WHERE outcome = 'sent'`))
	require.Equal(t, int64(n), e.int64(`SELECT count(*) FROM sequence_enrollments WHERE state = 'completed'`))
}

// TestClaimIsFairAcrossAccounts: one claim takes at most PerAccount enrollments
// of one account, so an account with a large backlog leaves room for another's.
func TestClaimIsFairAcrossAccounts(t *testing.T) {
	e := setup(t)
	big, small := e.account("big"), e.account("small")
	for _, acct := range []int64{big, small} {
		tpl := e.template(acct)
		seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
		require.NoError(t, err)
		_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
		require.NoError(t, err)
		count := 500
		if acct == small {
			count = 3
		}
		testfactory.New(e.pool).Subscribers(t, acct, "s", count, "confirmed")
		// the big account's backlog fell due first
		due := e.clock.Now().Add(-time.Hour)
		if acct == small {
			due = e.clock.Now()
		}
		testfactory.New(e.pool).EnrollEveryone(t, acct, seq.ID, due)
	}
	tx, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(e.ctx) }()
	now := e.clock.Now()
	rows, err := store.New(tx).SequenceClaimDue(e.ctx, store.SequenceClaimDueParams{Now: &now, PerAccount: 10, N: 20})
	require.NoError(t, err)
	per := map[int64]int{}
	for _, r := range rows {
		per[r.AccountID]++
	}
	require.Equal(t, map[int64]int{big: 10, small: 3}, per)
}

// TestStepCampaignNeverLockedToFinish: a step campaign is always sending while its
// sequence lives; the finalizer, run on every empty claim of it, must not take
// its row FOR UPDATE each time (a lock per idle step campaign per poll).
func TestStepCampaignNeverLockedToFinish(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	camp := e.int64(`SELECT campaign_id FROM sequence_steps WHERE sequence_id = $1 AND position = 0`, seq.ID)
	_, err = store.New(e.pool).CampaignLockSending(e.ctx, camp)
	require.ErrorIs(t, err, pgx.ErrNoRows)
}
