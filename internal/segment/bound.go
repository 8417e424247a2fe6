package segment

import (
	"context"
	"strconv"
	"time"

	"github.com/sendonce/sendonce/internal/store"
)

// Bound limits the rest of q's transaction to timeout per statement and makes it
// plan with the actual parameter values, so a set predicate can use the attributes
// index. q must run in a transaction (both settings are SET LOCAL).
func Bound(ctx context.Context, q *store.Queries, timeout time.Duration) error {
	if err := q.SegmentSetTimeout(ctx, strconv.FormatInt(max(timeout.Milliseconds(), 1), 10)); err != nil {
		return err
	}
	return q.SegmentForceCustomPlan(ctx)
}
