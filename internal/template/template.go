// Package template keeps an account's templates: named subject/HTML/text triples
// that campaigns reference (their content is copied into the campaign when it is
// approved) and transactional messages render. Saving a template parses, bounds and
// renders it with the render package's rules, the same as a campaign's templates.
package template

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/layout"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
)

// Template is one template of an account.
type Template struct {
	ID                        int64
	Name, Subject, HTML, Text string
	Language                  string
	// SampleData is a JSON object: what a preview renders as {{.Attributes}} when
	// the caller gives no data.
	SampleData json.RawMessage
	// TrackClicks is the default of the messages made from the template: their
	// literal links become click redirects unless the message says otherwise.
	TrackClicks bool
	// ContentType is "html" (HTML and Text are the author's) or "markdown"
	// (Markdown is the author's; HTML and Text are what it composes to in
	// LayoutID, or in the account's default layout when LayoutID is nil).
	// "blocks" is the same with Blocks, the visual builder's design.
	ContentType          string
	Markdown             string
	Blocks               json.RawMessage
	LayoutID             *int64
	CreatedAt, UpdatedAt time.Time
	// Attachments are the files messages and campaigns made from the template
	// get when they have none of their own; filled by Get, Create and Update.
	Attachments []attachment.Info
}

// Fields are the editable fields of a template; nil keeps (or defaults) a field.
type Fields struct {
	Name, Subject, HTML, Text, Language *string
	SampleData                          json.RawMessage
	// TrackClicks sets the messages' default click tracking (nil: keep, or off).
	TrackClicks *bool
	// Attachments replace the template's files ([] removes them).
	Attachments *[]attachment.Input
	files       []provider.Attachment
	// ContentType, Markdown, Blocks and LayoutID set composed content.
	ContentType, Markdown *string
	Blocks                json.RawMessage
	LayoutID              *int64
}

func (f Fields) change() Change {
	return Change{Type: f.ContentType, Markdown: f.Markdown, Blocks: f.Blocks, LayoutID: f.LayoutID, HTMLGiven: f.HTML != nil || f.Text != nil}
}

// Service manages templates.
type Service struct {
	pool *pgxpool.Pool
}

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

func fromStore(t store.Template) Template {
	return Template{ID: t.ID, Name: t.Name, Subject: t.Subject, HTML: t.Html, Text: t.Text, Language: t.Language,
		SampleData: t.SampleData, TrackClicks: t.TrackClicks, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		ContentType: t.ContentType, Markdown: t.Markdown, Blocks: t.Blocks, LayoutID: t.LayoutID}
}

// pointers renames the render package's field pointers to this resource's fields.
var pointers = map[string]string{"/html_template": "/html", "/text_template": "/text"}

// Repoint rewrites the field pointers of a template error from the campaign's
// names (/html_template, /text_template) to prefix plus html, text or subject, for
// resources whose fields are called subject, html and text.
func Repoint(err error, prefix string) error {
	e, ok := err.(*apperr.Error)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	out := *e
	out.Fields = make([]apperr.FieldError, len(e.Fields))
	for i, f := range e.Fields {
		if p, ok := pointers[f.Pointer]; ok {
			f.Pointer = p
		}
		f.Pointer = prefix + f.Pointer
		out.Fields[i] = f
	}
	return &out
}

// validate checks a template as it will be stored: it must parse within the
// limits and render for the sample recipient with its sample data.
func validate(t store.Template) error {
	if strings.TrimSpace(t.Subject) == "" {
		return apperr.Invalidf("/subject", "subject must not be empty")
	}
	if strings.TrimSpace(t.Html) == "" && strings.TrimSpace(t.Text) == "" {
		return apperr.Invalidf("/html", "a template needs an html or a text part")
	}
	tpl, err := render.Parse(t.Subject, t.Html, t.Text)
	if err != nil {
		return Repoint(err, "")
	}
	r := render.Sample
	r.Attributes = t.SampleData
	if _, err := tpl.Render(r, render.SampleUnsubscribeURL); err != nil {
		return Repoint(err, "")
	}
	return nil
}

// checkData refuses data that is not a JSON object or exceeds the attribute limit.
func checkData(pointer string, data json.RawMessage) error {
	if data == nil {
		return nil
	}
	if len(data) > render.MaxAttributeBytes {
		return apperr.Invalidf(pointer, "%s must be at most %d bytes of JSON", pointer[1:], render.MaxAttributeBytes)
	}
	if d := bytes.TrimSpace(data); len(d) == 0 || d[0] != '{' || !json.Valid(d) {
		return apperr.Invalidf(pointer, "%s must be a JSON object", pointer[1:])
	}
	return nil
}

func (s *Service) normalize(f *Fields) error {
	if f.Name != nil {
		n := strings.TrimSpace(*f.Name)
		if n == "" || len(n) > 200 {
			return apperr.Invalidf("/name", "name must be 1 to 200 characters")
		}
		f.Name = &n
	}
	if f.Attachments != nil {
		files, err := attachment.Check(*f.Attachments, "/attachments")
		if err != nil {
			return err
		}
		f.files = files
	}
	return checkData("/sample_data", f.SampleData)
}

// storeAttachments replaces the template's files in q's transaction.
func storeAttachments(ctx context.Context, q *store.Queries, accountID, templateID int64, files []provider.Attachment) error {
	if err := q.TemplateAttachmentDelete(ctx, store.TemplateAttachmentDeleteParams{AccountID: accountID, TemplateID: templateID}); err != nil {
		return err
	}
	return attachment.Store(ctx, q, accountID, files, func(pos int32, a provider.Attachment, sum []byte) error {
		return q.TemplateAttachmentInsert(ctx, store.TemplateAttachmentInsertParams{TemplateID: templateID, Position: pos,
			AccountID: accountID, Filename: a.Filename, ContentType: a.ContentType, ContentID: a.ContentID, Sha256: sum})
	})
}

// withAttachments fills t.Attachments.
func (s *Service) withAttachments(ctx context.Context, accountID int64, t Template) (Template, error) {
	var err error
	t.Attachments, err = attachment.DescribeTemplate(ctx, store.New(s.pool), accountID, t.ID)
	return t, err
}

// Create stores a template after checking it.
func (s *Service) Create(ctx context.Context, accountID int64, f Fields) (Template, error) {
	if err := s.normalize(&f); err != nil {
		return Template{}, err
	}
	if f.SampleData == nil {
		f.SampleData = json.RawMessage(`{}`)
	}
	arg := store.TemplateCreateParams{AccountID: accountID, Name: optional.Value(f.Name), Subject: optional.Value(f.Subject),
		Html: optional.Value(f.HTML), Text: optional.Value(f.Text), Language: optional.Value(f.Language), SampleData: f.SampleData,
		TrackClicks: f.TrackClicks != nil && *f.TrackClicks}
	c := content{Type: "html"}
	if err := c.apply(f.change()); err != nil {
		return Template{}, err
	}
	if c.Type == "html" {
		if err := validate(store.Template{Subject: arg.Subject, Html: arg.Html, Text: arg.Text, SampleData: arg.SampleData}); err != nil {
			return Template{}, err
		}
	}
	var t store.Template
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if Composed(c.Type) {
			var err error
			if arg.Html, arg.Text, err = layout.ComposeContent(ctx, q, accountID, c.LayoutID, c.Type, c.Markdown, c.Blocks); err != nil {
				return err
			}
			if err := validate(store.Template{Subject: arg.Subject, Html: arg.Html, Text: arg.Text, SampleData: arg.SampleData}); err != nil {
				return SourceError(c.Type, err)
			}
		}
		var err error
		if t, err = q.TemplateCreate(ctx, arg); err != nil {
			return err
		}
		if Composed(c.Type) {
			if t, err = q.TemplateSetContent(ctx, store.TemplateSetContentParams{AccountID: accountID, ID: t.ID,
				ContentType: c.Type, Markdown: c.Markdown, Blocks: c.Blocks, LayoutID: c.LayoutID}); err != nil {
				return err
			}
		}
		return storeAttachments(ctx, q, accountID, t.ID, f.files)
	})
	if apperr.Is(err, apperr.Invalid) {
		return Template{}, err
	}
	if err != nil {
		return Template{}, postgres.Error(err, "a template with this name")
	}
	return s.withAttachments(ctx, accountID, fromStore(t))
}

// Get returns one template.
func (s *Service) Get(ctx context.Context, accountID, id int64) (Template, error) {
	t, err := store.New(s.pool).TemplateGet(ctx, store.TemplateGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Template{}, postgres.Error(err, "template")
	}
	return s.withAttachments(ctx, accountID, fromStore(t))
}

// List returns up to limit templates after afterID in id order.
func (s *Service) List(ctx context.Context, accountID, afterID int64, limit int) ([]Template, error) {
	rows, err := store.New(s.pool).TemplateList(ctx, store.TemplateListParams{AccountID: accountID, AfterID: afterID, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Template, len(rows))
	for i, r := range rows {
		out[i] = fromStore(r)
	}
	return out, nil
}

// Update changes a template. The template is checked as stored after the change,
// in the update's transaction, so a bad patch changes nothing. Campaigns approved
// before keep the content they were approved with.
func (s *Service) Update(ctx context.Context, accountID, id int64, f Fields) (Template, error) {
	if err := s.normalize(&f); err != nil {
		return Template{}, err
	}
	var out store.Template
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		t, err := store.New(tx).TemplateUpdate(ctx, store.TemplateUpdateParams{AccountID: accountID, ID: id,
			Name: f.Name, Subject: f.Subject, Html: f.HTML, Text: f.Text, Language: f.Language, SampleData: f.SampleData,
			TrackClicks: f.TrackClicks})
		if err != nil {
			return postgres.Error(err, "template")
		}
		c := content{Type: t.ContentType, Markdown: t.Markdown, Blocks: t.Blocks, LayoutID: t.LayoutID}
		if f.ContentType != nil || f.Markdown != nil || f.Blocks != nil || f.LayoutID != nil || Composed(c.Type) {
			if err := c.apply(f.change()); err != nil {
				return err
			}
			q := store.New(tx)
			var html, text string
			if Composed(c.Type) {
				// Composed first: a layout that is not the account's is a 422 naming it.
				if html, text, err = layout.ComposeContent(ctx, q, accountID, c.LayoutID, c.Type, c.Markdown, c.Blocks); err != nil {
					return err
				}
			}
			if t, err = q.TemplateSetContent(ctx, store.TemplateSetContentParams{AccountID: accountID, ID: id,
				ContentType: c.Type, Markdown: c.Markdown, Blocks: c.Blocks, LayoutID: c.LayoutID}); err != nil {
				return err
			}
			if Composed(c.Type) {
				t.Html, t.Text = html, text
				if err := q.TemplateSetComposed(ctx, store.TemplateSetComposedParams{AccountID: accountID, ID: id, Html: t.Html, Text: t.Text}); err != nil {
					return err
				}
			}
		}
		out = t
		if err := validate(t); err != nil {
			return SourceError(c.Type, err)
		}
		if f.Attachments != nil {
			return storeAttachments(ctx, store.New(tx), accountID, id, f.files)
		}
		return nil
	})
	if apperr.Is(err, apperr.Conflict) {
		return Template{}, apperr.New(apperr.Conflict, "a template with this name already exists")
	}
	if err != nil {
		return Template{}, err
	}
	return s.withAttachments(ctx, accountID, fromStore(out))
}

// Delete removes a template that no draft campaign references.
func (s *Service) Delete(ctx context.Context, accountID, id int64) error {
	q := store.New(s.pool)
	// In a transaction, which carries the request's audit entry.
	var n int64
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		n, err = store.New(tx).TemplateDelete(ctx, store.TemplateDeleteParams{AccountID: accountID, ID: id})
		return err
	})
	if err != nil {
		return err
	}
	if n == 1 {
		return nil
	}
	if ok, err := q.TemplateExists(ctx, store.TemplateExistsParams{AccountID: accountID, ID: id}); err != nil {
		return err
	} else if ok {
		return apperr.New(apperr.Conflict, "a draft campaign uses this template; give it other content before deleting the template")
	}
	return apperr.New(apperr.NotFound, "template not found")
}

// Duplicate copies the account's template id, attachments included, as a new
// template named "<name> (copy)" (or "(copy 2)", … when that is taken). Another
// account's template is not found.
func (s *Service) Duplicate(ctx context.Context, accountID, id int64) (Template, error) {
	var t store.Template
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		var err error
		if t, err = q.TemplateDuplicate(ctx, store.TemplateDuplicateParams{AccountID: accountID, ID: id}); err != nil {
			return postgres.Error(err, "template")
		}
		return q.TemplateAttachmentsCopy(ctx, store.TemplateAttachmentsCopyParams{ToID: t.ID, AccountID: accountID, FromID: id})
	})
	if apperr.Is(err, apperr.Conflict) {
		return Template{}, apperr.New(apperr.Conflict, "another copy of this template was made at the same time; try again")
	}
	if err != nil {
		return Template{}, err
	}
	return s.withAttachments(ctx, accountID, fromStore(t))
}
