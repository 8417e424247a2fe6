package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/template"
)

func toAPITemplate(t template.Template) api.Template {
	return api.Template{Id: t.ID, Name: t.Name, Subject: t.Subject, Html: t.HTML, Text: t.Text, Language: t.Language,
		SampleData: t.SampleData, TrackClicks: t.TrackClicks, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Attachments: toAPIAttachments(t.Attachments),
		ContentType: api.TemplateContentType(t.ContentType), Markdown: t.Markdown, Blocks: toAPIDesign(t.Blocks), LayoutId: t.LayoutID}
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
	rows, next := pageOf(r, "templates", p, rows, func(x template.Template) cursor { return cursor{ID: x.ID} })
	out := api.TemplatePage{Data: make([]api.Template, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = toAPITemplate(x)
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) createTemplate(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.TemplateCreate](w, r, s.bodyLimitOf(r))
	if err != nil {
		return err
	}
	t, err := s.Templates.Create(r.Context(), accountID(r), template.Fields{Name: &in.Name, Subject: &in.Subject,
		HTML: in.Html, Text: in.Text, Language: in.Language, SampleData: raw(in.SampleData), TrackClicks: in.TrackClicks,
		Attachments: fromAPIAttachments(in.Attachments), ContentType: enumString(in.ContentType), Markdown: in.Markdown, Blocks: raw(in.Blocks), LayoutID: in.LayoutId})
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPITemplate(t))
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
	return encode(w, http.StatusOK, toAPITemplate(t))
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
	t, err := s.Templates.Update(r.Context(), accountID(r), id, template.Fields{Name: in.Name, Subject: in.Subject,
		HTML: in.Html, Text: in.Text, Language: in.Language, SampleData: raw(in.SampleData), TrackClicks: in.TrackClicks,
		Attachments: fromAPIAttachments(in.Attachments), ContentType: enumString(in.ContentType), Markdown: in.Markdown, Blocks: raw(in.Blocks), LayoutID: in.LayoutId})
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPITemplate(t))
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
	p := template.Preview{Data: raw(in.Data)}
	if in.Email != nil {
		p.Email = *in.Email
	}
	if in.Name != nil {
		p.Name = *in.Name
	}
	out, err := s.Templates.Render(r.Context(), accountID(r), id, p)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.Rendered{Subject: out.Subject, Html: out.HTML, Text: out.Text})
}

// previewTemplate renders an unsaved template: the editor's live preview.
func (s *Server) previewTemplate(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.TemplatePreview](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	p := template.Preview{Data: raw(in.Data)}
	if in.Email != nil {
		p.Email = *in.Email
	}
	if in.Name != nil {
		p.Name = *in.Name
	}
	html, text := deref(in.Html), deref(in.Text)
	if ct := enumString(in.ContentType); ct != nil || in.Markdown != nil || in.Blocks != nil || in.LayoutId != nil {
		ch := template.Change{Type: ct, Markdown: in.Markdown, Blocks: raw(in.Blocks), LayoutID: in.LayoutId, HTMLGiven: in.Html != nil || in.Text != nil}
		if html, text, err = s.Templates.ComposeUnsaved(r.Context(), accountID(r), ch, html, text); err != nil {
			return err
		}
	}
	out, err := template.PreviewUnsaved(in.Subject, html, text, raw(in.SampleData), p)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.Rendered{Subject: out.Subject, Html: out.HTML, Text: out.Text})
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
	return encode(w, http.StatusCreated, toAPITemplate(t))
}
