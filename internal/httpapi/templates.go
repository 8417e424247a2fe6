package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/sendonce/sendonce/api"
)

// Templates keeps the accounts' templates and renders them (template.API).
type Templates interface {
	List(ctx context.Context, accountID, afterID int64, limit int) ([]api.Template, error)
	Create(ctx context.Context, accountID int64, in api.TemplateCreate) (api.Template, error)
	Get(ctx context.Context, accountID, id int64) (api.Template, error)
	// Update changes the fields present; a layout id of 0 clears the layout.
	Update(ctx context.Context, accountID, id int64, in api.TemplateUpdate) (api.Template, error)
	Delete(ctx context.Context, accountID, id int64) error
	Duplicate(ctx context.Context, accountID, id int64) (api.Template, error)
	Render(ctx context.Context, accountID, id int64, in api.RenderRequest) (api.Rendered, error)
	// Preview renders an unsaved template: the editor's live preview.
	Preview(ctx context.Context, accountID int64, in api.TemplatePreview) (api.Rendered, error)
}

// toAPIDesign is a block design, absent (nil) unless the content is blocks.
func toAPIDesign(d json.RawMessage) *api.BlockDesign {
	if len(d) == 0 {
		return nil
	}
	return (*api.BlockDesign)(&d)
}

func raw(p *json.RawMessage) json.RawMessage {
	if p == nil {
		return nil
	}
	return *p
}

func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "templates")
	if err != nil {
		return err
	}
	rows, err := s.Templates.List(r.Context(), accountID(r), p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "templates", p, rows, func(x api.Template) cursor { return cursor{ID: x.Id} })
	return encode(w, http.StatusOK, api.TemplatePage{Data: rows, NextCursor: next})
}

func (s *Server) createTemplate(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.TemplateCreate](w, r, s.bodyLimitOf(r))
	if err != nil {
		return err
	}
	t, err := s.Templates.Create(r.Context(), accountID(r), in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, t)
}

func (s *Server) getTemplate(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	t, err := s.Templates.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, t)
}

func (s *Server) updateTemplate(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, nulls, err := decodeUpdate[api.TemplateUpdate](w, r, s.bodyLimitOf(r))
	if err != nil {
		return err
	}
	// null clears the layout (the account's default applies); the service takes 0 for that.
	if nulls["layout_id"] {
		none := int64(0)
		in.LayoutId = &none
	}
	t, err := s.Templates.Update(r.Context(), accountID(r), id, in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, t)
}

func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Templates.Delete(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) renderTemplate(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.RenderRequest](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	out, err := s.Templates.Render(r.Context(), accountID(r), id, in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, out)
}

// previewTemplate renders an unsaved template: the editor's live preview.
func (s *Server) previewTemplate(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.TemplatePreview](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	out, err := s.Templates.Preview(r.Context(), accountID(r), in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, out)
}

// duplicateTemplate copies a template, attachments included, as a new one.
func (s *Server) duplicateTemplate(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	t, err := s.Templates.Duplicate(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, t)
}
