// Package suppression records addresses that must never be sent to again. A
// suppression always wins over subscriber status: the executor excludes suppressed
// addresses when it builds a recipient list and re-checks them when it claims each
// recipient, so one added mid-send stops every message not yet claimed.
package suppression

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Reasons an address is suppressed.
const (
	ReasonUnsubscribe = "unsubscribe"
	ReasonHardBounce  = "hard_bounce"
	ReasonComplaint   = "complaint"
	ReasonManual      = "manual"
)

// ValidReason reports whether r is one of the reasons above.
func ValidReason(r string) bool {
	switch r {
	case ReasonUnsubscribe, ReasonHardBounce, ReasonComplaint, ReasonManual:
		return true
	}
	return false
}

// Suppression is one suppressed address of an account.
type Suppression struct {
	Email     string // the lower-case key
	Reason    string
	Source    string
	CreatedAt time.Time
}

// Add suppresses email for the account using db, which may be a transaction (the
// webhook handler records the event in the same one). It is idempotent: an address
// already suppressed keeps its first record and inserted is false. An unsubscribe
// also marks the subscriber unsubscribed.
func Add(ctx context.Context, db store.DBTX, accountID int64, email, reason, source string) (s Suppression, inserted bool, err error) {
	addr, err := address.Parse(email)
	if err != nil {
		return Suppression{}, false, apperr.Invalidf("/email", "%s", err.Error())
	}
	if !ValidReason(reason) {
		return Suppression{}, false, apperr.Invalidf("/reason", "reason must be unsubscribe, hard_bounce, complaint or manual")
	}
	q := store.New(db)
	row, err := q.SuppressionAdd(ctx, store.SuppressionAddParams{
		AccountID: accountID, EmailLower: addr.Lower, Reason: reason, Source: source,
	})
	if err != nil {
		return Suppression{}, false, postgres.Error(err, "suppression")
	}
	if reason == ReasonUnsubscribe {
		if err := q.SubscriberMarkUnsubscribed(ctx, store.SubscriberMarkUnsubscribedParams{AccountID: accountID, EmailLower: addr.Lower}); err != nil {
			return Suppression{}, false, err
		}
	}
	return Suppression{Email: row.EmailLower, Reason: row.Reason, Source: row.Source, CreatedAt: row.CreatedAt}, row.Inserted, nil
}
