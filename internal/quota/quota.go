// Package quota holds an account to the quotas its operator set (internal/operator):
// subscribers and senders (size-like: 403 past them). Each is checked where the
// write happens, in the writing transaction.
package quota

import (
	"context"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/store"
)

// The quotas, as the problem's "quota" member names them.
const (
	Subscribers = "subscribers"
	Senders     = "senders"
)

// Exceeded is the error of a write past a size-like quota: 403 problem+json
// quota-exceeded naming the quota, its limit and what is used.
func Exceeded(quota string, limit, used int64) error {
	return &apperr.Error{Code: apperr.QuotaExceeded,
		Message: "quota " + quota + " reached: the account's operator set its limit; nothing was changed",
		Extra:   map[string]any{"quota": quota, "limit": limit, "used": used}}
}

// Room locks the account's quota (when it has one) for the rest of the
// transaction q runs in and returns the limit and what is used. ok is false when
// the account has no such quota (nothing locked, nothing counted).
func Room(ctx context.Context, q *store.Queries, accountID int64, quota string) (limit, used int64, ok bool, err error) {
	lim, err := q.QuotaLimits(ctx, accountID)
	if err != nil {
		return 0, 0, false, err
	}
	var l *int64
	switch quota {
	case Subscribers:
		l = lim.QuotaSubscribers
	case Senders:
		l = lim.QuotaSenders
	}
	if l == nil {
		return 0, 0, false, nil
	}
	if err := q.QuotaLock(ctx, store.QuotaLockParams{Quota: quota, AccountID: accountID}); err != nil {
		return 0, 0, false, err
	}
	switch quota {
	case Subscribers:
		used, err = q.QuotaSubscribersUsed(ctx, accountID)
	case Senders:
		used, err = q.QuotaSendersUsed(ctx, accountID)
	}
	return *l, used, true, err
}

// Reserve is Room for a write that adds one: Exceeded when nothing is left.
func Reserve(ctx context.Context, q *store.Queries, accountID int64, quota string) error {
	limit, used, ok, err := Room(ctx, q, accountID, quota)
	if err != nil || !ok {
		return err
	}
	if used >= limit {
		return Exceeded(quota, limit, used)
	}
	return nil
}
