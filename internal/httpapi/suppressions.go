package httpapi

import (
	"context"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
)

// Suppressions are the accounts' suppression lists (suppression.API).
type Suppressions interface {
	List(ctx context.Context, accountID int64, afterEmail string, limit int) ([]api.Suppression, error)
	// Add suppresses an address at once; inserted is false when it already was,
	// and the first record is returned.
	Add(ctx context.Context, accountID int64, in api.SuppressionCreate) (x api.Suppression, inserted bool, err error)
	Get(ctx context.Context, accountID int64, email string) (api.Suppression, error)
	Remove(ctx context.Context, accountID int64, email string) error
}

func (s *Server) listSuppressions(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "suppressions")
	if err != nil {
		return err
	}
	rows, err := s.Suppressions.List(r.Context(), accountID(r), p.AfterKey, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "suppressions", p, rows, func(x api.Suppression) cursor { return cursor{Key: x.Email} })
	return encode(w, http.StatusOK, api.SuppressionPage{Data: rows, NextCursor: next})
}

// addSuppression suppresses an address at once (Suppressions.Add): 201 when new,
// 200 with the first record when it already was.
func (s *Server) addSuppression(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SuppressionCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	x, inserted, err := s.Suppressions.Add(r.Context(), accountID(r), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if inserted {
		status = http.StatusCreated
	}
	return encode(w, status, x)
}

// getSuppression answers GET /v1/suppressions/{email}: whether, why and since when
// the address is suppressed (404: it is not).
func (s *Server) getSuppression(w http.ResponseWriter, r *http.Request) error {
	// chi matches on the raw path when the client escaped it (%40 for @).
	email, err := url.PathUnescape(chi.URLParam(r, "email"))
	if err != nil {
		return apperr.Invalidf("/email", "email is not a valid path segment")
	}
	x, err := s.Suppressions.Get(r.Context(), accountID(r), email)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, x)
}

func (s *Server) removeSuppression(w http.ResponseWriter, r *http.Request) error {
	// chi matches on the raw path when the client escaped it (%40 for @).
	email, err := url.PathUnescape(chi.URLParam(r, "email"))
	if err != nil {
		return apperr.Invalidf("/email", "email is not a valid path segment")
	}
	if err := s.Suppressions.Remove(r.Context(), accountID(r), email); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
