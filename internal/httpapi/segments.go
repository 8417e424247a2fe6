package httpapi

import (
	"net/http"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/segment"
)

// previewSample is how many subscribers a segment preview shows.
const previewSample = 10

func toAPISegment(g segment.Segment) api.Segment {
	return api.Segment{Id: g.ID, Name: g.Name, Match: g.Match, Statuses: g.Statuses, ListIds: g.ListIDs,
		CreatedAfter: g.CreatedAfter, CreatedBefore: g.CreatedBefore, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
}

func segmentFilter[S ~string](match *string, statuses *[]S, listIDs *[]int64, after, before *time.Time) segment.Filter {
	f := segment.Filter{CreatedAfter: after, CreatedBefore: before}
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
	rows, err := s.Segments.List(r.Context(), accountID(r), p.AfterID, p.Limit+1)
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
		segmentFilter(in.Match, in.Statuses, in.ListIds, in.CreatedAfter, in.CreatedBefore))
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
		segmentFilter(in.Match, in.Statuses, in.ListIds, in.CreatedAfter, in.CreatedBefore))
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
		segmentFilter(in.Match, in.Statuses, in.ListIds, in.CreatedAfter, in.CreatedBefore), previewSample)
	if err != nil {
		return err
	}
	out := api.SegmentPreview{Count: n, Sample: make([]api.Subscriber, len(sample))}
	for i, x := range sample {
		out.Sample[i] = toAPISubscriber(x)
	}
	return encode(w, http.StatusOK, out)
}
