package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/subscriber"
)

// previewSample is how many subscribers a segment preview shows.
const previewSample = 10

// Segments keeps the accounts' segments and reads whom they select (segment.API).
type Segments interface {
	List(ctx context.Context, accountID, afterID int64, nameContains string, limit int) ([]api.Segment, error)
	Create(ctx context.Context, accountID int64, in api.SegmentInput) (api.Segment, error)
	Get(ctx context.Context, accountID, id int64) (api.Segment, error)
	Update(ctx context.Context, accountID, id int64, in api.SegmentInput) (api.Segment, error)
	Delete(ctx context.Context, accountID, id int64) error
	Preview(ctx context.Context, accountID int64, in api.SegmentFilter, sampleSize int) (int64, []subscriber.Subscriber, error)
	Members(ctx context.Context, accountID, id, afterID int64, limit int) ([]subscriber.Subscriber, error)
	MembersCount(ctx context.Context, accountID, id int64) (n int64, exact bool, err error)
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
	rows, next := pageOf(r, "segments", p, rows, func(x api.Segment) cursor { return cursor{ID: x.Id} })
	return encode(w, http.StatusOK, api.SegmentPage{Data: rows, NextCursor: next})
}

func (s *Server) createSegment(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SegmentInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	g, err := s.Segments.Create(r.Context(), accountID(r), in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, g)
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
	return encode(w, http.StatusOK, g)
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
	g, err := s.Segments.Update(r.Context(), accountID(r), id, in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, g)
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
	n, sample, err := s.Segments.Preview(r.Context(), accountID(r), in, previewSample)
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
