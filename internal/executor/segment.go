package executor

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sendonce/sendonce/internal/store"
)

// segmentBuild prepares the build of a campaign with a segment, in the build's
// transaction: the segment's filter becomes the build's segment_* parameters (read
// once, so the audience is the segment as it was at the start), every statement
// after this is bounded by timeout, and the build is planned with the actual
// predicate so the attributes index can serve it.
func segmentBuild(ctx context.Context, q *store.Queries, accountID, segmentID int64, timeout time.Duration,
	p *store.SendBuildRecipientsParams) error {
	g, err := q.SegmentGet(ctx, accountID, segmentID)
	if err != nil {
		return err
	}
	if g.Match != "" {
		p.SegmentMatch = &g.Match
	}
	p.SegmentStatuses, p.SegmentListIds = g.Statuses, g.ListIds
	p.SegmentCreatedAfter, p.SegmentCreatedBefore = g.CreatedAfter, g.CreatedBefore
	if err := q.SegmentSetTimeout(ctx, strconv.FormatInt(max(timeout.Milliseconds(), 1), 10)); err != nil {
		return err
	}
	return q.SegmentForceCustomPlan(ctx)
}

// isQueryCanceled reports a statement stopped by statement_timeout.
func isQueryCanceled(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "57014"
}
