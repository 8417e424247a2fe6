package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/layout"
)

func toAPILayout(l layout.Layout) api.Layout {
	return api.Layout{Id: l.ID, Name: l.Name, Html: l.HTML, Text: l.Text, Default: l.Default,
		CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

// enumString reads an optional enum of the wire types as a string.
func enumString[T ~string](p *T) *string {
	if p == nil {
		return nil
	}
	s := string(*p)
	return &s
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
	rows, next := pageOf(r, "layouts", p, rows, func(x layout.Layout) cursor { return cursor{ID: x.ID} })
	out := api.LayoutPage{Data: make([]api.Layout, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = toAPILayout(x)
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) createLayout(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.LayoutCreate](w, r, s.bodyLimitOf(r))
	if err != nil {
		return err
	}
	l, err := s.Layouts.Create(r.Context(), accountID(r), layout.Fields{Name: &in.Name, HTML: &in.Html, Text: in.Text, Default: in.Default})
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPILayout(l))
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
	return encode(w, http.StatusOK, toAPILayout(l))
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
	l, err := s.Layouts.Update(r.Context(), accountID(r), id, layout.Fields{Name: in.Name, HTML: in.Html, Text: in.Text, Default: in.Default})
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPILayout(l))
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
