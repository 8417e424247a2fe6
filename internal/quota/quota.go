// Package quota holds an account to the quotas its operator set (internal/operator):
// subscribers and senders (size-like: 403 past them) and messages per UTC day
// (rate-like: 429 until the next UTC midnight). Each is checked where the write
// happens, in the writing transaction.
package quota

import (
	"context"
	"math"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// The quotas, as the problem's "quota" member names them.
const (
	Subscribers    = "subscribers"
	Senders        = "senders"
	MessagesPerDay = "messages_per_day"
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

// DayExceeded is the error of a message past the messages_per_day quota at now:
// 429 problem+json daily-quota-exceeded naming the quota, its limit, what is
// used, and when the day ends (resets_at, and retry_after in whole seconds: the
// Retry-After).
func DayExceeded(limit, used int64, now time.Time) error {
	next := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	secs := int(math.Ceil(next.Sub(now).Seconds()))
	return &apperr.Error{Code: apperr.DailyQuotaExceeded,
		Message: "quota " + MessagesPerDay + " reached for today (UTC): the account's operator set its limit; " +
			"nothing was stored; retry after the next UTC midnight",
		Extra: map[string]any{"quota": MessagesPerDay, "limit": limit, "used": used,
			"resets_at": next.Format(time.RFC3339), "retry_after": max(secs, 1)}}
}

// TakeMessage takes one message of now's UTC day from the account's
// messages_per_day quota, in the transaction q runs in (the one that accepts the
// message, so a rollback gives it back), or returns DayExceeded when the day's
// quota is used up. An account without the quota takes nothing and writes nothing.
func TakeMessage(ctx context.Context, q *store.Queries, accountID int64, now time.Time) error {
	lim, err := q.QuotaLimits(ctx, accountID)
	if err != nil || lim.QuotaMessagesPerDay == nil {
		return err
	}
	limit := *lim.QuotaMessagesPerDay
	if limit > 0 {
		_, err := q.QuotaMessagesTake(ctx, store.QuotaMessagesTakeParams{AccountID: accountID, Now: now, Lim: limit})
		if !postgres.NoRows(err) {
			return err
		}
	}
	used, err := q.QuotaMessagesUsed(ctx, store.QuotaMessagesUsedParams{AccountID: accountID, Now: now})
	if err != nil {
		return err
	}
	return DayExceeded(limit, used, now)
}
