package sequence

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// The segment trigger's sweep bounds. A pass reads at most segmentChunk of one
// account's subscribers for one of its sequences (segmentPerAccount sequences of an
// account per pass), so an account with a huge segment takes several passes while
// every other account's sequences are swept beside it; a pass that still runs
// longer than segmentTimeout is cut (and retried at its next due time).
const (
	segmentChunk      = 5000
	segmentPerAccount = 1
	segmentClaim      = 50
	segmentEvery      = time.Minute
	segmentTimeout    = "10s"
)

// EnrollSegments is the write path's side of the segment_entered trigger: called
// in the transaction that changed a subscriber's attributes or status, it enrolls
// them in each active segment-triggered sequence of the account whose segment they
// now match (once per sequence: an enrollment that exists changes nothing).
func EnrollSegments(ctx context.Context, db store.DBTX, accountID, subscriberID int64, now *time.Time) error {
	_, err := store.New(db).SequenceSegmentEnrollSubscriber(ctx, store.SequenceSegmentEnrollSubscriberParams{
		AccountID: accountID, SubscriberID: subscriberID, Now: now})
	return err
}

// sweepSegments runs one pass of the segment trigger's sweep: it claims the
// sequences whose sweep is due (SKIP LOCKED, pushed a minute ahead in the claim's
// own transaction, so replicas take disjoint ones and a crash loses nothing but a
// minute), then enrolls the matches in the next chunk of each one's account. A
// sequence whose scan did not reach the end is due again at once (the next tick
// goes on from its cursor); one whose scan ended starts over a minute later.
func (a *Advancer) sweepSegments(ctx context.Context) error {
	now := a.now()
	per, chunk := a.SegmentPerAccount, a.SegmentChunk
	if per <= 0 {
		per = segmentPerAccount
	}
	if chunk <= 0 {
		chunk = segmentChunk
	}
	claimed, err := store.New(a.Pool).SequenceSegmentSweepClaim(ctx, store.SequenceSegmentSweepClaimParams{
		Now: now, PerAccount: int32(per), N: segmentClaim, NextDue: now.Add(segmentEvery)})
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range claimed {
		err := postgres.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
			q := store.New(tx)
			if err := q.SequenceStatementTimeout(ctx, segmentTimeout); err != nil {
				return err
			}
			r, err := q.SequenceSweepSegment(ctx, store.SequenceSweepSegmentParams{AccountID: s.AccountID,
				SequenceID: s.ID, SegmentID: s.SegmentID, ListID: s.ListID, AfterID: s.SegmentSweepAfterID,
				Chunk: int32(chunk), Now: now})
			if err != nil {
				return err
			}
			due := now // more to scan: the next tick goes on
			if r.LastID == 0 {
				due = now.Add(segmentEvery) // the scan reached the end: start over in a minute
			}
			return q.SequenceSegmentSwept(ctx, store.SequenceSegmentSweptParams{ID: s.ID, AfterID: r.LastID, DueAt: due})
		})
		if postgres.IsCode(err, pgerrcode.QueryCanceled) {
			a.log().Warn("segment sweep pass cut by its statement timeout; retried in a minute",
				"sequence_id", s.ID, "account_id", s.AccountID)
			continue
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
