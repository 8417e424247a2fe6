package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/segment"
	"github.com/sendonce/sendonce/internal/subscriber"
)

// previewSample is how many subscribers a segment preview shows.
const previewSample = 10

func toAPISegment(g segment.Segment) api.Segment {
	return api.Segment{Id: g.ID, Name: g.Name, Match: g.Match, Statuses: g.Statuses, ListIds: g.ListIDs,
		CreatedAfter: g.CreatedAfter, CreatedBefore: g.CreatedBefore, Engagement: toAPISegmentEngagement(g.Engagement),
		CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
}

func toAPISegmentEngagement(e *segment.Engagement) *api.SegmentEngagement {
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
func engagementFilter(in *api.SegmentEngagement) *segment.Engagement {
	if in == nil {
		return nil
	}
	e := &segment.Engagement{Kind: string(in.Kind), CampaignID: in.CampaignId, PeopleOnly: true}
	if in.Negated != nil {
		e.Negated = *in.Negated
	}
	if in.PeopleOnly != nil {
		e.PeopleOnly = *in.PeopleOnly
	}
	if in.WithinDays != nil {
		d := int32(min(max(*in.WithinDays, -1), segment.MaxEngagementDays+1))
		e.Days = &d
	}
	return e
}

func segmentFilter[S ~string](match *string, statuses *[]S, listIDs *[]int64, after, before *time.Time,
	engagement *api.SegmentEngagement) segment.Filter {
	f := segment.Filter{CreatedAfter: after, CreatedBefore: before, Engagement: engagementFilter(engagement)}
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

func (s *Server) listSegments(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "segments")
	if err != nil {
		return err
	}
	name := strings.TrimSpace(r.URL.Query().Get("name"))
	if len(name) > 200 {
		return apperr.Invalidf("/name", "name must be at most 200 characters")
	}
	rows, err := s.Segments.List(r.Context(), accountID(r), p.AfterID, name, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "segments", p, rows, func(x segment.Segment) cursor { return cursor{ID: x.ID} })
	out := api.SegmentPage{Data: make([]api.Segment, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = toAPISegment(x)
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) createSegment(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SegmentInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	g, err := s.Segments.Create(r.Context(), accountID(r), in.Name,
		segmentFilter(in.Match, in.Statuses, in.ListIds, in.CreatedAfter, in.CreatedBefore, in.Engagement))
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPISegment(g))
}

func (s *Server) getSegment(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	g, err := s.Segments.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPISegment(g))
}

func (s *Server) updateSegment(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.SegmentInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	g, err := s.Segments.Update(r.Context(), accountID(r), id, in.Name,
		segmentFilter(in.Match, in.Statuses, in.ListIds, in.CreatedAfter, in.CreatedBefore, in.Engagement))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPISegment(g))
}

func (s *Server) deleteSegment(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Segments.Delete(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) previewSegment(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SegmentFilter](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	n, sample, err := s.Segments.Preview(r.Context(), accountID(r),
		segmentFilter(in.Match, in.Statuses, in.ListIds, in.CreatedAfter, in.CreatedBefore, in.Engagement), previewSample)
	if err != nil {
		return err
	}
	out := api.SegmentPreview{Count: n, Exact: n < subscriber.CountBound, Sample: make([]api.Subscriber, len(sample))}
	for i, x := range sample {
		out.Sample[i] = toAPISubscriber(x)
	}
	return encode(w, http.StatusOK, out)
}

// listSegmentSubscribers answers GET /v1/segments/{id}/subscribers: a page of the
// subscribers the segment selects now, in id order.
func (s *Server) listSegmentSubscribers(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	// The cursor is bound to this segment's listing.
	listing := "segment-subscribers:" + strconv.FormatInt(id, 10)
	p, err := parsePage(r, listing)
	if err != nil {
		return err
	}
	rows, err := s.Segments.Members(r.Context(), accountID(r), id, p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, listing, p, rows, func(x subscriber.Subscriber) cursor { return cursor{ID: x.ID} })
	out := api.SubscriberPage{Data: make([]api.Subscriber, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = toAPISubscriber(x)
	}
	return encode(w, http.StatusOK, out)
}

// countSegmentSubscribers answers GET /v1/segments/{id}/subscribers/count: how
// many subscribers the segment selects now, exact up to subscriber.CountBound.
func (s *Server) countSegmentSubscribers(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	n, exact, err := s.Segments.MembersCount(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.SubscriberCount{Count: n, Exact: exact})
}
