package executor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgerrcode"

	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// segmentFilter prepares the build of a campaign with a segment, in the build's
// read-only transaction: the segment's filter becomes the audience query's
// segment_* parameters (read once, so the audience is the segment as it was at the
// start), and the audience is planned with the actual predicate so the attributes
// index can serve it.
func segmentFilter(ctx context.Context, q *store.Queries, accountID, segmentID int64,
	p *store.CampaignAudiencePageParams) error {
	g, err := q.SegmentGet(ctx, store.SegmentGetParams{AccountID: accountID, ID: segmentID})
	if err != nil {
		return err
	}
	if g.Match != "" {
		p.SegmentMatch = &g.Match
	}
	p.SegmentStatuses, p.SegmentListIds = g.Statuses, g.ListIds
	p.SegmentCreatedAfter, p.SegmentCreatedBefore = g.CreatedAfter, g.CreatedBefore
	p.SegmentEngaged, p.SegmentEngagedNegated, p.SegmentEngagedCampaignID = g.EngagedKind, g.EngagedNegated, g.EngagedCampaignID
	p.SegmentEngagedDays, p.SegmentEngagedPeopleOnly = g.EngagedDays, g.EngagedPeopleOnly
	return q.SegmentForceCustomPlan(ctx)
}

// boundBuild limits every later statement of the build's transaction to what is
// left of its time (statement_timeout, SET LOCAL): a pathological predicate is
// cancelled by the server instead of holding a backend.
func boundBuild(ctx context.Context, q *store.Queries, left time.Duration) error {
	if left <= 0 {
		return errBuildTimeout
	}
	return q.SegmentSetTimeout(ctx, strconv.FormatInt(max(left.Milliseconds(), 1), 10))
}

// errBuildTimeout is a segment build that used up SegmentBuildTimeout.
var errBuildTimeout = errors.New("segment build exceeded its time limit")

// cannotStart tells a build error that would recur on every attempt (the segment's
// predicate cannot be evaluated, or the build ran past its limit) from one that may
// pass, and words the reason the failed campaign shows.
func cannotStart(err error, limit time.Duration) (string, bool) {
	if errors.Is(err, errBuildTimeout) || isQueryCanceled(err) {
		return fmt.Sprintf("the segment's recipient build exceeded its time limit of %s", limit), true
	}
	// UndefinedObject: a jsonpath variable with no value (a segment saved before
	// variables were refused); a syntax error or a data exception: a predicate
	// PostgreSQL cannot evaluate.
	if code := postgres.Code(err); code == pgerrcode.UndefinedObject || code == pgerrcode.SyntaxError ||
		postgres.InClass(code, pgerrcode.DataException) {
		return "the segment cannot be evaluated: " + postgres.Message(err), true
	}
	return "", false
}

// isQueryCanceled reports a statement stopped by statement_timeout.
func isQueryCanceled(err error) bool {
	return postgres.IsCode(err, pgerrcode.QueryCanceled)
}
