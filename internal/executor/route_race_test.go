package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/invariant"
)

// TestSenderChangeMidSendIsRaceFree: the dispatcher re-routes campaigns on every
// refresh while workers send rows it claimed. A sender changed mid-send (its
// provider rebuilt) must reach the workers without a data race (run with -race:
// the refreshes and the sends below share no lock), as must the re-routing of a
// campaign that has no sender, and every recipient still gets each campaign
// once, through one provider or the other.
func TestSenderChangeMidSendIsRaceFree(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	f.account("other")
	acct := f.account("a")
	f.subscribers(acct, "s", 60, "confirmed")
	snd := f.sender(acct, "esp", "resend", true)
	id := f.campaign(acct, nil, "skip", time.Now().Add(-time.Minute))
	other := f.account("b") // no sender: the executor's provider
	f.subscribers(other, "o", 20, "confirmed")
	plain := f.campaign(other, nil, "skip", time.Now().Add(-time.Minute))
	env, before, after := newFake(true), newFake(true), newFake(true)
	r := &swapRoutes{byID: map[int64]Route{snd: {Provider: before}}}
	e, err := New(pool, env, Config{Workers: 8, BatchSize: 60, Senders: r}, nil, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		delivered := before.delivered()
		for _, p := range []*fakeProvider{after, env} {
			for k, v := range p.delivered() {
				delivered[k] += v
			}
		}
		invariant.Require(t, pool, invariant.Options{Delivered: delivered})
	})
	ctx := context.Background()
	_, err = e.startDue(ctx)
	require.NoError(t, err)
	d := e.newDealer()
	require.NoError(t, e.refresh(ctx, d))
	var jobs []job
	for _, cid := range []int64{id, plain} {
		c := d.byID[cid]
		rows, err := e.claim(ctx, c, 60)
		require.NoError(t, err)
		require.NotEmpty(t, rows)
		for _, row := range rows {
			jobs = append(jobs, job{campaign: c, row: row})
		}
	}

	refreshed := make(chan error, 1)
	go func() { // the dispatcher, re-routing as the sender changes
		var err error
		for i := 0; i < 30 && err == nil; i++ {
			if i == 10 {
				r.set(snd, Route{Provider: after})
			}
			err = e.refresh(ctx, d)
		}
		refreshed <- err
	}()
	var res []result
	for _, j := range jobs { // a worker
		res = append(res, e.send(ctx, j))
	}
	require.NoError(t, <-refreshed)
	e.flush(res)
	require.True(t, e.finish(ctx, id))
	require.True(t, e.finish(ctx, plain))
}
