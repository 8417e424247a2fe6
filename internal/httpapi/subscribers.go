package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/subscriber"
	"github.com/sendonce/sendonce/internal/text"
)

func toAPISubscriber(s subscriber.Subscriber) api.Subscriber {
	return api.Subscriber{Id: s.ID, Email: s.Email, Name: s.Name, Attributes: s.Attributes,
		Status: api.SubscriberStatus(s.Status), CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

// pathID reads the {id} of the route.
func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id < 1 {
		return 0, apperr.Invalidf("/id", "id must be a positive integer")
	}
	return id, nil
}

// queryInt64 reads an optional integer query parameter.
func queryInt64(r *http.Request, name string) (*int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, apperr.Invalidf("/"+name, "%s must be an integer", name)
	}
	return &n, nil
}

func queryString(r *http.Request, name string) *string {
	if s := r.URL.Query().Get(name); s != "" {
		return &s
	}
	return nil
}

func (s *Server) listSubscribers(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "subscribers")
	if err != nil {
		return err
	}
	listID, err := queryInt64(r, "list_id")
	if err != nil {
		return err
	}
	rows, err := s.Subscribers.List(r.Context(), accountID(r), subscriber.Filter{
		Status: queryString(r, "status"), ListID: listID, EmailPrefix: queryString(r, "email"),
		Membership: r.URL.Query().Get("membership"), AfterID: p.AfterID, Limit: p.Limit + 1,
	})
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "subscribers", p, rows, func(x subscriber.Subscriber) cursor { return cursor{ID: x.ID} })
	out := api.SubscriberPage{Data: make([]api.Subscriber, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = toAPISubscriber(x)
	}
	return encode(w, http.StatusOK, out)
}

// countSubscribers answers GET /v1/subscribers/count: how many subscribers the
// listing's filters select, exact up to subscriber.CountBound.
func (s *Server) countSubscribers(w http.ResponseWriter, r *http.Request) error {
	listID, err := queryInt64(r, "list_id")
	if err != nil {
		return err
	}
	n, exact, err := s.Subscribers.Count(r.Context(), accountID(r), subscriber.Filter{
		Status: queryString(r, "status"), ListID: listID, EmailPrefix: queryString(r, "email"),
		Membership: r.URL.Query().Get("membership"),
	})
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.SubscriberCount{Count: n, Exact: exact})
}

func (s *Server) createSubscriber(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SubscriberCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	sub := subscriber.Input{Email: in.Email}
	if in.Name != nil {
		sub.Name = *in.Name
	}
	if in.Attributes != nil {
		sub.Attributes = *in.Attributes
	}
	if in.Status != nil {
		sub.Status = string(*in.Status)
	}
	created, err := s.Subscribers.Create(r.Context(), accountID(r), sub)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPISubscriber(created))
}

func (s *Server) getSubscriber(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	sub, err := s.Subscribers.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPISubscriber(sub))
}

// listSubscriberLists answers the lists one subscriber is in and how.
func (s *Server) listSubscriberLists(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	ms, err := s.Subscribers.Memberships(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	out := api.SubscriberMemberships{Data: make([]api.SubscriberMembership, len(ms))}
	for i, m := range ms {
		out.Data[i] = api.SubscriberMembership{ListId: m.ListID, Name: m.ListName,
			Status: api.SubscriberMembershipStatus(m.Status), CreatedAt: m.CreatedAt, StatusAt: m.StatusAt}
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) updateSubscriber(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.SubscriberUpdate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	p := subscriber.Patch{Email: in.Email, Name: in.Name}
	if in.Attributes != nil {
		p.Attributes = *in.Attributes
		if p.Attributes == nil {
			p.Attributes = map[string]any{}
		}
	}
	if in.Status != nil {
		st := string(*in.Status)
		p.Status = &st
	}
	sub, err := s.Subscribers.Update(r.Context(), accountID(r), id, p)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPISubscriber(sub))
}

func (s *Server) deleteSubscriber(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Subscribers.Delete(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) confirmSubscriber(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	sub, err := s.Subscribers.Confirm(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPISubscriber(sub))
}

// importSubscribers takes a JSON array or a CSV file (see openapi.yaml for the
// columns) and answers what was inserted, updated and rejected, line by line.
func (s *Server) importSubscribers(w http.ResponseWriter, r *http.Request) error {
	listID, err := queryInt64(r, "list_id")
	if err != nil {
		return err
	}
	var lists []int64
	if listID != nil {
		lists = []int64{*listID}
	}
	if err := checkLists(r, lists); err != nil {
		return err
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var rows []subscriber.ImportRow
	var rejected []subscriber.Rejection
	switch mt {
	case "text/csv":
		rows, rejected, err = subscriber.ParseCSV(r.Body, params["charset"])
	case "application/json":
		rows, rejected, err = parseJSONImport(r.Body)
	default:
		w.Header().Set("Accept", "application/json, text/csv")
		err = apperr.New(apperr.UnsupportedMediaType, "Content-Type must be application/json or text/csv")
	}
	if err != nil {
		var ae *apperr.Error
		if !errors.As(err, &ae) {
			// Not a verdict on the content: the body could not be read (too large,
			// too slow, cut off).
			return bodyReadError(err, s.opts.ImportMaxBytes)
		}
		if apperr.Is(err, apperr.UnsupportedMediaType) {
			w.Header().Set("Accept", "text/csv; charset=utf-8, application/json")
		}
		return err
	}
	// ?status= is the status of every row that names none (a CSV without the column):
	// without it a new subscriber is pending and an existing one keeps its status.
	switch st := r.URL.Query().Get("status"); st {
	case "":
	case "pending", "confirmed":
		for i := range rows {
			if rows[i].Status == nil {
				rows[i].Status = &st
			}
		}
	default:
		return apperr.Invalidf("/status", "status must be pending or confirmed")
	}
	res, err := s.Subscribers.Import(r.Context(), accountID(r), rows, rejected, listID)
	if err != nil {
		return err
	}
	summary := []any{"account", accountID(r), "inserted", res.Inserted, "updated", res.Updated, "rejected", len(res.Rejected)}
	if listID != nil {
		summary = append(summary, "list_id", *listID)
	}
	s.Logger.InfoContext(r.Context(), "subscribers imported", summary...)
	out := api.ImportResult{Inserted: res.Inserted, Updated: res.Updated, Rejected: make([]api.ImportRejection, len(res.Rejected))}
	for i, x := range res.Rejected {
		out.Rejected[i] = api.ImportRejection{Line: x.Line, Email: x.Email, Reason: x.Reason}
	}
	return encode(w, http.StatusOK, out)
}

// parseJSONImport streams a JSON array of rows. A row of the wrong shape, or with a
// string that is not storable text, is rejected with its 1-based index as the line
// (and the JSON pointer inside the row); broken JSON fails the request.
func parseJSONImport(body io.Reader) ([]subscriber.ImportRow, []subscriber.Rejection, error) {
	dec := json.NewDecoder(body)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		if isReadError(err) {
			return nil, nil, err
		}
		return nil, nil, apperr.Invalidf("", "the body must be a JSON array of subscribers")
	}
	var rows []subscriber.ImportRow
	var rejected []subscriber.Rejection
	for line := 1; dec.More(); line++ {
		if line > subscriber.MaxImportRows {
			return nil, nil, apperr.New(apperr.TooLarge, "an import holds at most %d rows", subscriber.MaxImportRows)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if isReadError(err) {
				return nil, nil, err
			}
			return nil, nil, apperr.Invalidf("", "malformed JSON in row %d", line)
		}
		if p := text.CheckJSON(raw); len(p) > 0 {
			rejected = append(rejected, subscriber.Rejection{Line: line, Reason: p[0].Pointer + " " + p[0].Reason})
			continue
		}
		var in api.SubscriberImportRow
		rowDec := json.NewDecoder(bytes.NewReader(raw))
		rowDec.DisallowUnknownFields()
		if err := rowDec.Decode(&in); err != nil {
			rejected = append(rejected, subscriber.Rejection{Line: line, Reason: apperrMessage(decodeError(err, 0))})
			continue
		}
		row := subscriber.ImportRow{Line: line, Name: in.Name, Status: in.Status}
		if in.Email != nil {
			row.Email = *in.Email
		}
		if in.Attributes != nil {
			row.Attributes = *in.Attributes
		}
		rows = append(rows, row)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, apperr.Invalidf("", "the JSON array is not closed")
	}
	return rows, rejected, nil
}

func apperrMessage(err error) string {
	var e *apperr.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "invalid row"
}
