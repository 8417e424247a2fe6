package executor

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sendonce/sendonce/internal/store"
)

// A claim statement can commit while its answer is lost: the connection dies
// after the statement was sent (a primary that fails over, a network cut), so the
// rows are 'sending', stamped with this process's executor id, and no goroutine
// knows of them. The liveness rescue leaves them alone (their executor beats) and
// only their lease would free them. After such a claim, the dispatcher stops
// claiming until this process holds nothing (every claim returned, every row it
// was handed acknowledged or released), then hands back every 'sending' row still
// stamped with one of its ids (SendReleaseLost): those are exactly the lost
// claims' rows, never given to a provider, so they are queued again uncharged and
// not in doubt. Other executors' rows and later claims are untouched, and the
// attempts fence of every acknowledgement stays as it was.

// lostClaims says whether a claim may have committed unseen, and when the
// earliest such claim began. Only the dispatch goroutine touches it.
type lostClaims struct {
	pending bool
	since   time.Time // on the executor's clock, before the statement
}

// leaseFromIn is where, counted from now, the leases of the earliest lost claim
// end at the soonest: it began since ago, so its rows' lease_until (now() at the
// claim plus Lease, on the database's clock) is at least now - ago + Lease there.
// Measured on this process's clock alone: however far that is from the
// database's, the bound lands on the database's clock where it should.
func (e *Executor) leaseFromIn() time.Duration {
	return e.cfg.Lease - lostClaimSkew - e.clock().Sub(e.lost.since)
}

// lostClaimSkew is how much earlier than the failed claim's start a row's claim
// may have been dated and still be taken for the lost claim's: it covers the
// round trip of the release statement, whose now() is later than the moment
// the executor measured the claim's age. Under synchronous replication every
// 'sending' row of this process that it does not hold is a lost claim's, whenever
// it was claimed; under asynchronous replication a failover can also undo the
// acknowledgement of a row that was sent, and such a row was claimed before the
// failed claim began: outside this window it is left to the lease rescue, which
// treats it as possibly delivered (unknown over SMTP). Clocks play no part: the
// bound is an age on this process's clock laid onto the database's (leaseFromIn).
const lostClaimSkew = time.Second

// claimFailed notes a claim statement's error and returns it: unless the
// statement surely did not commit, its rows may be held unseen. claimedAt is
// when the claim began, on the executor's clock.
func (e *Executor) claimFailed(err error, claimedAt time.Time) error {
	if err != nil && claimOutcomeUnknown(err) {
		if !e.lost.pending || claimedAt.Before(e.lost.since) {
			e.lost.since = claimedAt
		}
		e.lost.pending = true
	}
	return err
}

// claimOutcomeUnknown reports whether a failed claim statement may have
// committed: true unless it never reached the server (pgconn.SafeToRetry) or the
// server answered it with an error, which rolls its transaction back. A FATAL
// answer (the backend terminated) says nothing of a commit already made.
func claimOutcomeUnknown(err error) bool {
	if pgconn.SafeToRetry(err) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Severity == "ERROR" {
		return false
	}
	return true
}

// settleLostClaims runs before every deal. While a lost claim is pending it holds
// the dealing (hold true) until this process holds nothing, then releases the
// lost claims' rows. wait is how long to wait before dealing again; a claim's
// result and every acknowledgement (slotsFreed) wake the dispatcher sooner.
func (e *Executor) settleLostClaims(ctx context.Context, d *dealer) (wait time.Duration, hold bool, err error) {
	if !e.lost.pending {
		return 0, false, nil
	}
	if d.inflight > 0 || e.outstanding() > 0 {
		return e.cfg.Poll, true, nil
	}
	ids := e.live.everID()
	if len(ids) == 0 {
		// Claims without a registration (tests driving the steps) answer to their lease.
		e.lost.pending = false
		return 0, false, nil
	}
	n, err := e.q.SendReleaseLost(ctx, store.SendReleaseLostParams{Now: e.now(), ExecutorIds: ids,
		LeaseFromInUs: e.leaseFromIn().Microseconds()})
	if err != nil {
		return 0, true, err
	}
	e.lost.pending = false
	e.log.Info("released the rows of claims whose answer was lost", "rows", n, "executor_ids", ids)
	if n > 0 {
		e.metrics.sends.WithLabelValues("released").Add(float64(n))
	}
	return 0, false, nil
}
