package template

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/layout"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
)

// Preview is what a template is rendered for: the recipient's address and name
// ({{.Email}}, {{.Name}}; empty means the sample recipient's) and data, a JSON
// object seen as {{.Attributes}} (nil means the template's sample data).
type Preview struct {
	Email, Name string
	Data        json.RawMessage
}

// Render renders template id for p, under the same limits as a send.
func (s *Service) Render(ctx context.Context, accountID, id int64, p Preview) (render.Rendered, error) {
	if err := checkData("/data", p.Data); err != nil {
		return render.Rendered{}, err
	}
	t, err := s.Get(ctx, accountID, id)
	if err != nil {
		return render.Rendered{}, err
	}
	return RenderFor(t.Subject, t.HTML, t.Text, recipient(p, t.SampleData))
}

// PreviewUnsaved renders a template that is not stored (an editor's live
// preview) with the checks of saving: errors name /subject, /html or /text (with
// the line), /sample_data, /data or /email. Nothing is read or written.
func PreviewUnsaved(subject, html, text string, sample json.RawMessage, p Preview) (render.Rendered, error) {
	if err := checkData("/sample_data", sample); err != nil {
		return render.Rendered{}, err
	}
	if err := checkData("/data", p.Data); err != nil {
		return render.Rendered{}, err
	}
	if strings.TrimSpace(subject) == "" {
		return render.Rendered{}, apperr.Invalidf("/subject", "subject must not be empty")
	}
	if strings.TrimSpace(html) == "" && strings.TrimSpace(text) == "" {
		return render.Rendered{}, apperr.Invalidf("/html", "a template needs an html or a text part")
	}
	return RenderFor(subject, html, text, recipient(p, sample))
}

func recipient(p Preview, sample json.RawMessage) render.Recipient {
	r := render.Sample
	if p.Email != "" {
		r.Email = p.Email
	}
	if p.Name != "" {
		r.Name = p.Name
	}
	r.Attributes = p.Data
	if r.Attributes == nil {
		r.Attributes = sample
	}
	return r
}

// RenderFor parses subject, html and text within the limits and renders them for
// r, with {{.UnsubscribeURL}} the sample link. Errors name the fields subject,
// html and text.
func RenderFor(subject, html, text string, r render.Recipient) (render.Rendered, error) {
	if r.Email != render.Sample.Email {
		if _, err := address.Parse(r.Email); err != nil {
			return render.Rendered{}, apperr.Invalidf("/email", "%s", err.Error())
		}
	}
	tpl, err := render.Parse(subject, html, text)
	if err != nil {
		return render.Rendered{}, Repoint(err, "")
	}
	out, err := tpl.Render(r, render.SampleUnsubscribeURL)
	if err != nil {
		return render.Rendered{}, Repoint(err, "")
	}
	return out, nil
}

// ComposeUnsaved returns the html and text of unsaved content (an editor's live
// preview): html and text as given for HTML content, or the Markdown composed in
// its layout, or the block design rendered in it. Errors name /content_type,
// /markdown, /blocks or /layout_id. Nothing is written.
func (s *Service) ComposeUnsaved(ctx context.Context, accountID int64, ch Change, html, text string) (string, string, error) {
	c := content{Type: "html"}
	if err := c.apply(ch); err != nil {
		return "", "", err
	}
	if !Composed(c.Type) {
		return html, text, nil
	}
	var err error
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		html, text, err = layout.ComposeContent(ctx, store.New(tx), accountID, c.LayoutID, c.Type, c.Markdown, c.Blocks)
		return err
	})
	if err != nil {
		return "", "", err
	}
	return html, text, nil
}
