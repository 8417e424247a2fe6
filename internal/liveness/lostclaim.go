package liveness

import (
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sendonce/sendonce/internal/postgres"
)

// A claim can commit while its answer is lost: the connection dies after the
// statement (or the COMMIT) was sent — a primary that fails over, a network cut —
// so the rows are claimed, stamped with this process's id, and no goroutine knows
// of them. The liveness judgement leaves them alone (their process beats) and
// only their lease would free them. After such a claim the caller stops claiming
// until it holds nothing (every claim returned, every row it was handed settled),
// then hands back every claimed row still stamped with one of its ids
// (Registration.IDs): those are exactly the lost claims' rows, never worked on,
// so they go back uncharged. Other processes' rows and later claims are untouched.

// LostClaims says whether a claim may have committed unseen, and when the earliest
// such claim began. It belongs to the one goroutine that claims; it is not safe
// for concurrent use.
type LostClaims struct {
	pending bool
	since   time.Time // on the caller's clock, before the statement
}

// LostClaimSkew is how much earlier than the failed claim's start a row's claim
// may have been dated and still be taken for the lost claim's: it covers the
// round trip of the release statement, whose now() is later than the moment the
// caller measured the claim's age. Under synchronous replication every claimed
// row of this process that it does not hold is a lost claim's, whenever it was
// claimed; under asynchronous replication a failover can also undo the recorded
// outcome of a row that was worked on, and such a row was claimed before the
// failed claim began: outside this window it is left to its lease.
const LostClaimSkew = time.Second

// Failed notes a claim's error and returns it: unless the claim surely did not
// commit, its rows may be held unseen. claimedAt is when the claim began, on the
// caller's clock.
func (l *LostClaims) Failed(err error, claimedAt time.Time) error {
	if err != nil && OutcomeUnknown(err) {
		if !l.pending || claimedAt.Before(l.since) {
			l.since = claimedAt
		}
		l.pending = true
	}
	return err
}

// Pending reports whether a lost claim waits to be released.
func (l *LostClaims) Pending() bool { return l.pending }

// LeaseFromIn is where, counted from now on the caller's clock, the leases of the
// earliest lost claim end at the soonest, for a claim that leases rows for lease:
// it began now-since ago, so its rows' lease ends (the database's now() at the
// claim plus lease) are at least that far from the database's now(). The release
// statements add it to their own now(): rows whose lease ends earlier were
// claimed before the failed claim began (less LostClaimSkew) and are not
// released. Only an age on the caller's clock is laid onto the database's, so
// however far the two clocks are apart the bound lands where it should.
func (l *LostClaims) LeaseFromIn(lease time.Duration, now time.Time) time.Duration {
	return lease - LostClaimSkew - now.Sub(l.since)
}

// Released records that the lost claims' rows were handed back (or that there is
// nothing to hand back: claims made without a registration answer to their lease).
func (l *LostClaims) Released() { l.pending = false }

// OutcomeUnknown reports whether a failed claim may have committed: true unless it
// never reached the server (pgconn.SafeToRetry) or the server answered it with an
// error, which rolls its transaction back. A FATAL answer (the backend terminated)
// says nothing of a commit already made.
func OutcomeUnknown(err error) bool {
	if pgconn.SafeToRetry(err) {
		return false
	}
	if postgres.Severity(err) == "ERROR" {
		return false
	}
	return true
}
