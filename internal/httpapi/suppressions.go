package httpapi

import (
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/suppression"
)

func toAPISuppression(x suppression.Suppression) api.Suppression {
	return api.Suppression{Email: x.Email, Reason: api.SuppressionReason(x.Reason), Source: x.Source, CreatedAt: x.CreatedAt}
}

func (s *Server) listSuppressions(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "suppressions")
	if err != nil {
		return err
	}
	rows, err := suppression.List(r.Context(), s.Pool, accountID(r), p.AfterKey, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "suppressions", p, rows, func(x suppression.Suppression) cursor { return cursor{Key: x.Email} })
	out := api.SuppressionPage{Data: make([]api.Suppression, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = toAPISuppression(x)
	}
	return encode(w, http.StatusOK, out)
}

// addSuppression suppresses an address at once (suppression.Add): 201 when new, 200
// with the first record when it already was.
func (s *Server) addSuppression(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SuppressionCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	reason, source := suppression.ReasonManual, "api"
	if in.Reason != nil {
		reason = string(*in.Reason)
	}
	if in.Source != nil {
		source = *in.Source
	}
	// One transaction: the suppression, the subscriber it unsubscribes, and the
	// request's audit entry commit together.
	var x suppression.Suppression
	var inserted bool
	err = postgres.InTx(r.Context(), s.Pool, func(tx pgx.Tx) error {
		var err error
		x, inserted, err = suppression.Add(r.Context(), tx, accountID(r), in.Email, reason, source)
		return err
	})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if inserted {
		status = http.StatusCreated
	}
	return encode(w, status, toAPISuppression(x))
}

// getSuppression answers GET /v1/suppressions/{email}: whether, why and since when
// the address is suppressed (404: it is not).
func (s *Server) getSuppression(w http.ResponseWriter, r *http.Request) error {
	// chi matches on the raw path when the client escaped it (%40 for @).
	email, err := url.PathUnescape(chi.URLParam(r, "email"))
	if err != nil {
		return apperr.Invalidf("/email", "email is not a valid path segment")
	}
	x, err := suppression.Get(r.Context(), s.Pool, accountID(r), email)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPISuppression(x))
}

func (s *Server) removeSuppression(w http.ResponseWriter, r *http.Request) error {
	// chi matches on the raw path when the client escaped it (%40 for @).
	email, err := url.PathUnescape(chi.URLParam(r, "email"))
	if err != nil {
		return apperr.Invalidf("/email", "email is not a valid path segment")
	}
	if err := suppression.Remove(r.Context(), s.Pool, accountID(r), email); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
