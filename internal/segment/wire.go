package segment

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/subscriber"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// List returns a page of the account's segments (Service.List).
func (a API) List(ctx context.Context, accountID, afterID int64, nameContains string, limit int) ([]api.Segment, error) {
	rows, err := a.Service.List(ctx, accountID, afterID, nameContains, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.Segment, len(rows))
	for i, x := range rows {
		out[i] = toAPISegment(x)
	}
	return out, nil
}

// Create adds a segment (Service.Create).
func (a API) Create(ctx context.Context, accountID int64, in api.SegmentInput) (api.Segment, error) {
	return wire(a.Service.Create(ctx, accountID, in.Name,
		segmentFilter(in.Match, in.Statuses, in.ListIds, in.CreatedAfter, in.CreatedBefore, in.Engagement)))
}

// Get returns one segment (Service.Get).
func (a API) Get(ctx context.Context, accountID, id int64) (api.Segment, error) {
	return wire(a.Service.Get(ctx, accountID, id))
}

// Update replaces a segment's name and filter (Service.Update).
func (a API) Update(ctx context.Context, accountID, id int64, in api.SegmentInput) (api.Segment, error) {
	return wire(a.Service.Update(ctx, accountID, id, in.Name,
		segmentFilter(in.Match, in.Statuses, in.ListIds, in.CreatedAfter, in.CreatedBefore, in.Engagement)))
}

// Preview counts whom a filter selects and samples them (Service.Preview).
func (a API) Preview(ctx context.Context, accountID int64, in api.SegmentFilter, sampleSize int) (int64, []subscriber.Subscriber, error) {
	return a.Service.Preview(ctx, accountID,
		segmentFilter(in.Match, in.Statuses, in.ListIds, in.CreatedAfter, in.CreatedBefore, in.Engagement), sampleSize)
}

func wire(g Segment, err error) (api.Segment, error) {
	if err != nil {
		return api.Segment{}, err
	}
	return toAPISegment(g), nil
}

func toAPISegment(g Segment) api.Segment {
	return api.Segment{Id: g.ID, Name: g.Name, Match: g.Match, Statuses: g.Statuses, ListIds: g.ListIDs,
		CreatedAfter: g.CreatedAfter, CreatedBefore: g.CreatedBefore, Engagement: toAPISegmentEngagement(g.Engagement),
		CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
}

func toAPISegmentEngagement(e *Engagement) *api.SegmentEngagement {
	if e == nil {
		return nil
	}
	out := &api.SegmentEngagement{Kind: api.SegmentEngagementKind(e.Kind), Negated: &e.Negated,
		CampaignId: e.CampaignID, PeopleOnly: &e.PeopleOnly}
	if e.Days != nil {
		d := int(*e.Days)
		out.WithinDays = &d
	}
	return out
}

// engagementFilter is the body's engagement condition (nil: none); people_only
// defaults to true, negated to false. Days past int32 stay out of bounds for the
// service's check.
func engagementFilter(in *api.SegmentEngagement) *Engagement {
	if in == nil {
		return nil
	}
	e := &Engagement{Kind: string(in.Kind), CampaignID: in.CampaignId, PeopleOnly: true}
	if in.Negated != nil {
		e.Negated = *in.Negated
	}
	if in.PeopleOnly != nil {
		e.PeopleOnly = *in.PeopleOnly
	}
	if in.WithinDays != nil {
		d := int32(min(max(*in.WithinDays, -1), MaxEngagementDays+1))
		e.Days = &d
	}
	return e
}

func segmentFilter[S ~string](match *string, statuses *[]S, listIDs *[]int64, after, before *time.Time,
	engagement *api.SegmentEngagement) Filter {
	f := Filter{CreatedAfter: after, CreatedBefore: before, Engagement: engagementFilter(engagement)}
	if match != nil {
		f.Match = *match
	}
	if statuses != nil {
		for _, st := range *statuses {
			f.Statuses = append(f.Statuses, string(st))
		}
	}
	if listIDs != nil {
		f.ListIDs = *listIDs
	}
	return f
}
