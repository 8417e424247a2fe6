package executor

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/internal/store"
)

// A claim statement can commit while its answer is lost (liveness.LostClaims):
// the connection dies after the statement was sent (a primary that fails over, a
// network cut), so the rows are 'sending', stamped with this process's executor id, and no goroutine
// knows of them. The liveness rescue leaves them alone (their executor beats) and
// only their lease would free them. After such a claim, the dispatcher stops
// claiming until this process holds nothing (every claim returned, every row it
// was handed acknowledged or released), then hands back every 'sending' row still
// stamped with one of its ids (SendReleaseLost): those are exactly the lost
// claims' rows, never given to a provider, so they are queued again uncharged and
// not in doubt. Other executors' rows and later claims are untouched, and the
// attempts fence of every acknowledgement stays as it was.

// claimFailed notes a claim statement's error and returns it: unless the
// statement surely did not commit, its rows may be held unseen. claimedAt is
// when the claim began, on the executor's clock.
func (e *Executor) claimFailed(err error, claimedAt time.Time) error {
	return e.lost.Failed(err, claimedAt)
}

// settleLostClaims runs before every deal. While a lost claim is pending it holds
// the dealing (hold true) until this process holds nothing, then releases the
// lost claims' rows. wait is how long to wait before dealing again; a claim's
// result and every acknowledgement (slotsFreed) wake the dispatcher sooner.
func (e *Executor) settleLostClaims(ctx context.Context, d *dealer) (wait time.Duration, hold bool, err error) {
	if !e.lost.Pending() {
		return 0, false, nil
	}
	if d.inflight > 0 || e.outstanding() > 0 {
		return e.cfg.Poll, true, nil
	}
	ids := e.live.IDs()
	if len(ids) == 0 {
		// Claims without a registration (tests driving the steps) answer to their lease.
		e.lost.Released()
		return 0, false, nil
	}
	n, err := e.planned(ctx, (*store.Queries).SendPlanLinear).SendReleaseLost(ctx, store.SendReleaseLostParams{Now: e.clk.DB(), ExecutorIds: ids,
		LeaseFromInUs: e.lost.LeaseFromIn(e.cfg.Lease, e.clk.Now()).Microseconds()})
	if err != nil {
		return 0, true, err
	}
	e.lost.Released()
	e.log.Info("released the rows of claims whose answer was lost", "rows", n, "executor_ids", ids)
	if n > 0 {
		e.metrics.sends.WithLabelValues("released").Add(float64(n))
	}
	return 0, false, nil
}
