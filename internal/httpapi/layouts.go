package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/layout"
)

func toAPILayout(l layout.Layout) api.Layout {
	return api.Layout{Id: l.ID, Name: l.Name, Html: l.HTML, Text: l.Text, Header: l.Header, Footer: l.Footer,
		Brand: api.LayoutBrand{Primary: nonEmpty(l.Brand.Primary), Background: nonEmpty(l.Brand.Background),
			Text: nonEmpty(l.Brand.Text), Link: nonEmpty(l.Brand.Link)},
		Default: l.Default, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

// nonEmpty is s, or nil when s is empty (left out of the JSON).
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// layoutFields are the layout.Fields of a create or an update.
func layoutFields(name, html, text, header, footer *string, brand *api.LayoutBrand, def *bool) layout.Fields {
	f := layout.Fields{Name: name, HTML: html, Text: text, Header: header, Footer: footer, Default: def}
	if brand != nil {
		f.BrandPrimary, f.BrandBackground, f.BrandText, f.BrandLink = brand.Primary, brand.Background, brand.Text, brand.Link
	}
	return f
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
	l, err := s.Layouts.Create(r.Context(), accountID(r), layoutFields(&in.Name, &in.Html, in.Text, in.Header, in.Footer, in.Brand, in.Default))
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
	l, err := s.Layouts.Update(r.Context(), accountID(r), id, layoutFields(in.Name, in.Html, in.Text, in.Header, in.Footer, in.Brand, in.Default))
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
