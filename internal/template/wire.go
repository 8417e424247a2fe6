package template

import (
	"context"
	"encoding/json"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/render"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// List returns a page of the account's templates (Service.List).
func (a API) List(ctx context.Context, accountID, afterID int64, limit int) ([]api.Template, error) {
	rows, err := a.Service.List(ctx, accountID, afterID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.Template, len(rows))
	for i, x := range rows {
		out[i] = toAPITemplate(x)
	}
	return out, nil
}

// Create adds a template (Service.Create).
func (a API) Create(ctx context.Context, accountID int64, in api.TemplateCreate) (api.Template, error) {
	return wire(a.Service.Create(ctx, accountID, Fields{Name: &in.Name, Subject: &in.Subject,
		HTML: in.Html, Text: in.Text, Language: in.Language, SampleData: raw(in.SampleData), TrackClicks: in.TrackClicks,
		Attachments: attachment.FromAPI(in.Attachments), ContentType: optional.AsString(in.ContentType), Markdown: in.Markdown, Blocks: raw(in.Blocks), LayoutID: in.LayoutId}))
}

// Get returns one template (Service.Get).
func (a API) Get(ctx context.Context, accountID, id int64) (api.Template, error) {
	return wire(a.Service.Get(ctx, accountID, id))
}

// Update changes the fields present in the request (Service.Update); a layout id
// of 0 clears the layout.
func (a API) Update(ctx context.Context, accountID, id int64, in api.TemplateUpdate) (api.Template, error) {
	return wire(a.Service.Update(ctx, accountID, id, Fields{Name: in.Name, Subject: in.Subject,
		HTML: in.Html, Text: in.Text, Language: in.Language, SampleData: raw(in.SampleData), TrackClicks: in.TrackClicks,
		Attachments: attachment.FromAPI(in.Attachments), ContentType: optional.AsString(in.ContentType), Markdown: in.Markdown, Blocks: raw(in.Blocks), LayoutID: in.LayoutId}))
}

// Duplicate copies a template, attachments included, as a new one (Service.Duplicate).
func (a API) Duplicate(ctx context.Context, accountID, id int64) (api.Template, error) {
	return wire(a.Service.Duplicate(ctx, accountID, id))
}

// Render renders template id for the request's person and data (Service.Render).
func (a API) Render(ctx context.Context, accountID, id int64, in api.RenderRequest) (api.Rendered, error) {
	p := Preview{Data: raw(in.Data)}
	if in.Email != nil {
		p.Email = *in.Email
	}
	if in.Name != nil {
		p.Name = *in.Name
	}
	return rendered(a.Service.Render(ctx, accountID, id, p))
}

// Preview renders an unsaved template, composed first when it is Markdown or
// blocks (ComposeUnsaved, PreviewUnsaved): the editor's live preview.
func (a API) Preview(ctx context.Context, accountID int64, in api.TemplatePreview) (api.Rendered, error) {
	p := Preview{Data: raw(in.Data)}
	if in.Email != nil {
		p.Email = *in.Email
	}
	if in.Name != nil {
		p.Name = *in.Name
	}
	html, text := optional.Value(in.Html), optional.Value(in.Text)
	if ct := optional.AsString(in.ContentType); ct != nil || in.Markdown != nil || in.Blocks != nil || in.LayoutId != nil {
		ch := Change{Type: ct, Markdown: in.Markdown, Blocks: raw(in.Blocks), LayoutID: in.LayoutId, HTMLGiven: in.Html != nil || in.Text != nil}
		var err error
		if html, text, err = a.ComposeUnsaved(ctx, accountID, ch, html, text); err != nil {
			return api.Rendered{}, err
		}
	}
	return rendered(PreviewUnsaved(in.Subject, html, text, raw(in.SampleData), p))
}

func rendered(out render.Rendered, err error) (api.Rendered, error) {
	if err != nil {
		return api.Rendered{}, err
	}
	return api.Rendered{Subject: out.Subject, Html: out.HTML, Text: out.Text}, nil
}

func wire(t Template, err error) (api.Template, error) {
	if err != nil {
		return api.Template{}, err
	}
	return toAPITemplate(t), nil
}

func toAPITemplate(t Template) api.Template {
	return api.Template{Id: t.ID, Name: t.Name, Subject: t.Subject, Html: t.HTML, Text: t.Text, Language: t.Language,
		SampleData: t.SampleData, TrackClicks: t.TrackClicks, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Attachments: attachment.ToAPI(t.Attachments),
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
