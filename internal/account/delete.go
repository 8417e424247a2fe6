package account

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/store"
)

// DefaultPurgeBatch is how many rows one purge statement deletes unless told.
const DefaultPurgeBatch = 1000

// Delete removes the account and everything it holds, in batches of
// DefaultPurgeBatch with no pause (Purge).
func (s *Service) Delete(ctx context.Context, id int64) (int64, error) {
	return s.Purge(ctx, id, DefaultPurgeBatch, 0)
}

// Purge removes the account and everything it holds. Its large tables go first,
// batch rows per statement, each statement its own short transaction, with pause
// between two statements: every account's event readers wait below the oldest
// running transaction, so one DELETE of a large account (its sends, subscribers
// and events by cascade) would hold them all back for as long as it ran, and a
// pause leaves the other tenants' claims the database's attention. The account
// row goes last and takes what is left with it (small tables, and whatever was
// written meanwhile). It returns how many rows the batches deleted; an account
// that does not exist is NotFound. A Purge cut short leaves the account in place,
// with less in it: run it again.
func (s *Service) Purge(ctx context.Context, id int64, batch int32, pause time.Duration) (int64, error) {
	if batch < 1 {
		batch = DefaultPurgeBatch
	}
	q := store.New(s.pool)
	if _, err := q.AccountGetByID(ctx, id); err != nil {
		return 0, apperr.New(apperr.NotFound, "account %d not found", id)
	}
	// Leaves before what they reference: deliveries name events, the sequence log
	// names enrollments, memberships name subscribers.
	purges := []func(context.Context, int64, int32) (int64, error){
		purge(q.AccountPurgeEventDeliveries), purge(q.AccountPurgeEvents), purge(q.AccountPurgeEventBatches), purge(q.AccountPurgeTrackingHits),
		purge(q.AccountPurgeEngagementFirsts), purge(q.AccountPurgeSends), purge(q.AccountPurgeMessages),
		purge(q.AccountPurgeSequenceLog), purge(q.AccountPurgeEnrollments), purge(q.AccountPurgeTrackEvents),
		purge(q.AccountPurgeListMembers), purge(q.AccountPurgeSuppressions), purge(q.AccountPurgeAuditLog),
		purge(q.AccountPurgeSubscribers), purge(q.AccountPurgeMedia),
	}
	var total int64
	for _, p := range purges {
		for {
			n, err := p(ctx, id, batch)
			total += n
			if err != nil {
				return total, err
			}
			if n == 0 {
				break
			}
			if err := sleep(ctx, pause); err != nil {
				return total, err
			}
		}
	}
	n, err := q.AccountDelete(ctx, id)
	if err == nil && n == 0 {
		err = apperr.New(apperr.NotFound, "account %d not found", id)
	}
	return total, err
}

// purge adapts one generated purge statement (its params struct differs per
// table, its fields do not).
func purge[P ~struct {
	AccountID int64
	N         int32
}](f func(context.Context, P) (int64, error)) func(context.Context, int64, int32) (int64, error) {
	return func(ctx context.Context, id int64, n int32) (int64, error) { return f(ctx, P{AccountID: id, N: n}) }
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
