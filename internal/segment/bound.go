package segment

import (
	"context"
	"strconv"
	"time"

	"github.com/sendonce/sendonce/internal/store"
)

// Bound limits the rest of q's transaction to timeout per statement and makes it
// plan with the actual parameter values, so a set predicate can use the attributes
// index, without JIT compilation (a preview is run once: compiling it cost more
// than it saved). q must run in a transaction (the settings are SET LOCAL).
func Bound(ctx context.Context, q *store.Queries, timeout time.Duration) error {
	if err := q.SegmentSetTimeout(ctx, strconv.FormatInt(max(timeout.Milliseconds(), 1), 10)); err != nil {
		return err
	}
	if err := q.SegmentForceCustomPlan(ctx); err != nil {
		return err
	}
	return q.SegmentSetNoJIT(ctx)
}
