package segment

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/subscriber"
)

// row is the shape every segment query returns.
type row = store.SegmentGetRow

func fromRow(r row) Segment {
	return Segment{ID: r.ID, Name: r.Name, Filter: Filter{Match: r.Match, Statuses: r.Statuses, ListIDs: r.ListIds,
		CreatedAfter: r.CreatedAfter, CreatedBefore: r.CreatedBefore,
		Engagement: EngagementOf(r.EngagedKind, r.EngagedNegated, r.EngagedCampaignID, r.EngagedDays, r.EngagedPeopleOnly)},
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// Create saves a segment. PostgreSQL parses the predicate as it is stored: a
// predicate it refuses is a 422 on /match with its message, and nothing is stored.
func (s *Service) Create(ctx context.Context, accountID int64, name string, f Filter) (Segment, error) {
	name, err := checkName(name)
	if err != nil {
		return Segment{}, err
	}
	if err := s.check(ctx, accountID, &f); err != nil {
		return Segment{}, err
	}
	// In a transaction, which carries the request's audit entry.
	var r store.SegmentCreateRow
	kind, negated, campaignID, days, people := f.Engagement.Params()
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		r, err = store.New(tx).SegmentCreate(ctx, store.SegmentCreateParams{AccountID: accountID, Name: name,
			Match: matchParam(f.Match), Statuses: f.Statuses, ListIds: f.ListIDs,
			CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore,
			EngagedKind: kind, EngagedNegated: negated, EngagedCampaignID: campaignID, EngagedDays: days,
			EngagedPeopleOnly: people})
		return err
	})
	if err != nil {
		return Segment{}, postgres.Error(pgMatchError(err, s.Timeout), "a segment with this name")
	}
	return fromRow(row(r)), nil
}

// Get returns one segment.
func (s *Service) Get(ctx context.Context, accountID, id int64) (Segment, error) {
	r, err := store.New(s.pool).SegmentGet(ctx, store.SegmentGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Segment{}, postgres.Error(err, "segment")
	}
	return fromRow(r), nil
}

// List returns up to limit segments after afterID in id order.
func (s *Service) List(ctx context.Context, accountID, afterID int64, nameContains string, limit int) ([]Segment, error) {
	rows, err := store.New(s.pool).SegmentList(ctx, store.SegmentListParams{AccountID: accountID, AfterID: afterID,
		NameContains: nameContains, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Segment, len(rows))
	for i, r := range rows {
		out[i] = fromRow(row(r))
	}
	return out, nil
}

// Update replaces a segment's name and filter. Campaigns already sending keep the
// audience they were built with; drafts and approved campaigns use the new filter.
func (s *Service) Update(ctx context.Context, accountID, id int64, name string, f Filter) (Segment, error) {
	name, err := checkName(name)
	if err != nil {
		return Segment{}, err
	}
	if err := s.check(ctx, accountID, &f); err != nil {
		return Segment{}, err
	}
	kind, negated, campaignID, days, people := f.Engagement.Params()
	r, err := store.New(s.pool).SegmentUpdate(ctx, store.SegmentUpdateParams{AccountID: accountID, ID: id, Name: name,
		Match: matchParam(f.Match), Statuses: f.Statuses, ListIds: f.ListIDs,
		CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore,
		EngagedKind: kind, EngagedNegated: negated, EngagedCampaignID: campaignID, EngagedDays: days,
		EngagedPeopleOnly: people})
	if err != nil {
		return Segment{}, postgres.Error(pgMatchError(err, s.Timeout), "segment")
	}
	return fromRow(row(r)), nil
}

// Delete removes a segment; one that a campaign uses or a sequence triggers on is a conflict.
func (s *Service) Delete(ctx context.Context, accountID, id int64) error {
	// In a transaction, which carries the request's audit entry.
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		n, err := store.New(tx).SegmentDelete(ctx, store.SegmentDeleteParams{AccountID: accountID, ID: id})
		if err != nil {
			if apperr.CodeOf(postgres.Error(err, "segment")) == apperr.Invalid {
				return apperr.New(apperr.Conflict, "segment is used by a campaign or a sequence")
			}
			return err
		}
		if n == 0 {
			return apperr.New(apperr.NotFound, "segment not found")
		}
		return nil
	})
}

func toSubscriber(r store.Subscriber) subscriber.Subscriber {
	attrs := map[string]any{}
	_ = json.Unmarshal(r.Attributes, &attrs) // the column is CHECKed to be an object
	return subscriber.Subscriber{ID: r.ID, Email: r.Email, Name: r.Name, Attributes: attrs, Status: r.Status,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// countParams are the count's parameters for f, counting up to bound.
func countParams(accountID int64, f Filter, bound int32) store.SegmentPreviewCountParams {
	kind, negated, campaignID, days, people := f.Engagement.Params()
	return store.SegmentPreviewCountParams{AccountID: accountID,
		SegmentMatch: matchParam(f.Match), SegmentStatuses: f.Statuses, SegmentListIds: f.ListIDs,
		SegmentCreatedAfter: f.CreatedAfter, SegmentCreatedBefore: f.CreatedBefore,
		SegmentEngaged: kind, SegmentEngagedNegated: negated, SegmentEngagedCampaignID: campaignID,
		SegmentEngagedDays: days, SegmentEngagedPeopleOnly: people, Bound: bound}
}

// pageParams are the parameters for the first limit subscribers f selects after afterID.
func pageParams(accountID int64, f Filter, afterID int64, limit int) store.SegmentPreviewSampleParams {
	kind, negated, campaignID, days, people := f.Engagement.Params()
	return store.SegmentPreviewSampleParams{AccountID: accountID, AfterID: afterID,
		SegmentMatch: matchParam(f.Match), SegmentStatuses: f.Statuses, SegmentListIds: f.ListIDs,
		SegmentCreatedAfter: f.CreatedAfter, SegmentCreatedBefore: f.CreatedBefore, Lim: int32(limit),
		SegmentEngaged: kind, SegmentEngagedNegated: negated, SegmentEngagedCampaignID: campaignID,
		SegmentEngagedDays: days, SegmentEngagedPeopleOnly: people}
}

// count counts the subscribers f selects, up to bound. A filter with lists runs
// SegmentPreviewCountInLists, its lists a condition of their own and none left in
// the predicate (see the query's comment: the plan can then start from the lists'
// memberships); without lists the predicate's list test is empty and folds away.
func count(ctx context.Context, q *store.Queries, accountID int64, f Filter, bound int32) (int64, error) {
	p := countParams(accountID, f, bound)
	if len(f.ListIDs) == 0 {
		return q.SegmentPreviewCount(ctx, p)
	}
	return q.SegmentPreviewCountInLists(ctx, store.SegmentPreviewCountInListsParams{AccountID: p.AccountID,
		InListIds: f.ListIDs, SegmentMatch: p.SegmentMatch, SegmentStatuses: p.SegmentStatuses, SegmentListIds: []int64{},
		SegmentEngaged: p.SegmentEngaged, SegmentEngagedNegated: p.SegmentEngagedNegated,
		SegmentEngagedCampaignID: p.SegmentEngagedCampaignID, SegmentEngagedDays: p.SegmentEngagedDays,
		SegmentEngagedPeopleOnly: p.SegmentEngagedPeopleOnly, SegmentCreatedAfter: p.SegmentCreatedAfter,
		SegmentCreatedBefore: p.SegmentCreatedBefore, Bound: p.Bound})
}

// page returns the first limit subscribers f selects after afterID, in id order;
// a filter with lists runs SegmentPreviewSampleInLists (as count).
func page(ctx context.Context, q *store.Queries, accountID int64, f Filter, afterID int64, limit int) ([]store.Subscriber, error) {
	p := pageParams(accountID, f, afterID, limit)
	if len(f.ListIDs) == 0 {
		return q.SegmentPreviewSample(ctx, p)
	}
	return q.SegmentPreviewSampleInLists(ctx, store.SegmentPreviewSampleInListsParams{AccountID: p.AccountID,
		AfterID: p.AfterID, InListIds: f.ListIDs, SegmentMatch: p.SegmentMatch, SegmentStatuses: p.SegmentStatuses,
		SegmentListIds: []int64{}, SegmentEngaged: p.SegmentEngaged, SegmentEngagedNegated: p.SegmentEngagedNegated,
		SegmentEngagedCampaignID: p.SegmentEngagedCampaignID, SegmentEngagedDays: p.SegmentEngagedDays,
		SegmentEngagedPeopleOnly: p.SegmentEngagedPeopleOnly, SegmentCreatedAfter: p.SegmentCreatedAfter,
		SegmentCreatedBefore: p.SegmentCreatedBefore, Lim: p.Lim})
}

// bounded runs fn in one transaction bounded by the Service's Timeout (Bound); a
// predicate PostgreSQL refuses or that runs too long is a 422 on /match.
func (s *Service) bounded(ctx context.Context, fn func(q *store.Queries) error) error {
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if err := Bound(ctx, q, s.Timeout); err != nil {
			return err
		}
		return fn(q)
	})
	return pgMatchError(err, s.Timeout)
}

func toSubscribers(rows []store.Subscriber) []subscriber.Subscriber {
	out := make([]subscriber.Subscriber, len(rows))
	for i, r := range rows {
		out[i] = toSubscriber(r)
	}
	return out
}

// Preview counts the subscribers f selects, up to subscriber.CountBound (a count
// of the bound means at least that many, as the subscribers listing's total: an
// exact count of a whole large account would cost a scan of it at every key the
// dashboard's form is typed with), and returns up to sampleSize of them in id
// order, both in one transaction bounded by the Service's Timeout.
func (s *Service) Preview(ctx context.Context, accountID int64, f Filter, sampleSize int) (int64, []subscriber.Subscriber, error) {
	if err := s.check(ctx, accountID, &f); err != nil {
		return 0, nil, err
	}
	var n int64
	var sample []store.Subscriber
	err := s.bounded(ctx, func(q *store.Queries) error {
		var err error
		if n, err = count(ctx, q, accountID, f, subscriber.CountBound); err != nil || n == 0 {
			// Nothing to sample: looking for a first match would read every
			// subscriber the plan visits (the dashboard asks who of a list is
			// pending or unsubscribed, mostly nobody).
			return err
		}
		sample, err = page(ctx, q, accountID, f, 0, sampleSize)
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	return n, toSubscribers(sample), nil
}

// Members returns up to limit of the subscribers segment id selects now, after
// afterID in id order (a page of its members); an unknown segment is not found.
func (s *Service) Members(ctx context.Context, accountID, id, afterID int64, limit int) ([]subscriber.Subscriber, error) {
	g, err := s.Get(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	var rows []store.Subscriber
	err = s.bounded(ctx, func(q *store.Queries) error {
		var err error
		rows, err = page(ctx, q, accountID, g.Filter, afterID, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return toSubscribers(rows), nil
}

// MembersCount is how many subscribers segment id selects now, and whether that
// is exact: at subscriber.CountBound it stops and answers the bound, not exact (as
// the subscribers listing's total).
func (s *Service) MembersCount(ctx context.Context, accountID, id int64) (n int64, exact bool, err error) {
	g, err := s.Get(ctx, accountID, id)
	if err != nil {
		return 0, false, err
	}
	err = s.bounded(ctx, func(q *store.Queries) error {
		n, err = count(ctx, q, accountID, g.Filter, subscriber.CountBound)
		return err
	})
	if err != nil {
		return 0, false, err
	}
	return n, n < subscriber.CountBound, nil
}
