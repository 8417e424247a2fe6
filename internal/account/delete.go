package account

import (
	"context"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/store"
)

// Delete removes the account and everything it holds. Its large tables go first,
// 1,000 rows per statement, each statement its own short transaction: every
// account's event readers wait below the oldest running transaction, so one
// DELETE of a large account (its sends, subscribers and events by cascade) would
// hold them all back for as long as it ran. The account row goes last and takes
// what is left with it (small tables, and whatever was written meanwhile). It
// returns how many rows the batches deleted; an account that does not exist is
// NotFound. A Delete cut short leaves the account in place, with less in it: run
// it again.
func (s *Service) Delete(ctx context.Context, id int64) (int64, error) {
	q := store.New(s.pool)
	if _, err := q.AccountGetByID(ctx, id); err != nil {
		return 0, apperr.New(apperr.NotFound, "account %d not found", id)
	}
	// Dependents before what they reference: deliveries name events, the
	// sequence log names enrollments, memberships name subscribers.
	purges := []func(context.Context, int64) (int64, error){
		q.AccountPurgeEventDeliveries, q.AccountPurgeEvents, q.AccountPurgeTrackingHits, q.AccountPurgeEngagementFirsts, q.AccountPurgeSends,
		q.AccountPurgeMessages, q.AccountPurgeSequenceLog, q.AccountPurgeEnrollments, q.AccountPurgeTrackEvents,
		q.AccountPurgeListMembers, q.AccountPurgeSuppressions, q.AccountPurgeSubscribers,
	}
	var total int64
	for _, purge := range purges {
		for {
			n, err := purge(ctx, id)
			total += n
			if err != nil {
				return total, err
			}
			if n == 0 {
				break
			}
		}
	}
	n, err := q.AccountDelete(ctx, id)
	if err == nil && n == 0 {
		err = apperr.New(apperr.NotFound, "account %d not found", id)
	}
	return total, err
}
