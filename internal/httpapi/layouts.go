package httpapi

import (
	"context"
	"net/http"

	"github.com/sendonce/sendonce/api"
)

// Layouts keeps the frames Markdown content is rendered into (layout.API).
type Layouts interface {
	List(ctx context.Context, accountID, afterID int64, limit int) ([]api.Layout, error)
	Create(ctx context.Context, accountID int64, in api.LayoutCreate) (api.Layout, error)
	Get(ctx context.Context, accountID, id int64) (api.Layout, error)
	Update(ctx context.Context, accountID, id int64, in api.LayoutUpdate) (api.Layout, error)
	Delete(ctx context.Context, accountID, id int64) error
}

func (s *Server) listLayouts(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "layouts")
	if err != nil {
		return err
	}
	rows, err := s.Layouts.List(r.Context(), accountID(r), p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "layouts", p, rows, func(x api.Layout) cursor { return cursor{ID: x.Id} })
	return encode(w, http.StatusOK, api.LayoutPage{Data: rows, NextCursor: next})
}

func (s *Server) createLayout(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.LayoutCreate](w, r, s.bodyLimitOf(r))
	if err != nil {
		return err
	}
	l, err := s.Layouts.Create(r.Context(), accountID(r), in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, l)
}

func (s *Server) getLayout(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	l, err := s.Layouts.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, l)
}

func (s *Server) updateLayout(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.LayoutUpdate](w, r, s.bodyLimitOf(r))
	if err != nil {
		return err
	}
	l, err := s.Layouts.Update(r.Context(), accountID(r), id, in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, l)
}

func (s *Server) deleteLayout(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Layouts.Delete(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
