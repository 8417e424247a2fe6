// Package layout keeps an account's layouts: frames of HTML (and text) with one
// {{content}} where a message's body goes. Markdown content is converted and put
// in its layout (the one it names, or the account's default) when it is saved, and
// the result is stored as the content's html and text, which every sender reads:
// so a change of a layout recomposes, in its own transaction, every template and
// draft campaign it frames, and never a campaign already approved (approval
// pinned what it sends).
package layout

import (
	"cmp"
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/audit"
	"github.com/sendonce/sendonce/internal/blocks"
	"github.com/sendonce/sendonce/internal/markdown"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
)

// Token marks where the body goes in a layout's HTML and text.
const Token = "{{content}}"

// HeaderToken and FooterToken mark where the layout's header and footer go in
// its HTML; a frame without one has the header just before the body, the footer
// just after it.
const (
	HeaderToken = "{{header}}"
	FooterToken = "{{footer}}"
)

// Brand are a layout's brand colours, each #rrggbb or empty (none). The frame
// and its header and footer read them as {{brand.primary}}, {{brand.background}},
// {{brand.text}} and {{brand.link}} (an empty one reads as its default, in
// BrandDefaults); block designs take them as defaults.
type Brand = blocks.Brand

// BrandDefaults are the colours a frame reads for a brand colour left empty:
// the block renderer's own.
var BrandDefaults = Brand{Primary: "#1a56db", Background: "#ffffff", Text: "#222222", Link: "#1a56db"}

// Layout is one layout of an account.
type Layout struct {
	ID                   int64
	Name, HTML, Text     string
	Header, Footer       string
	Brand                Brand
	Default              bool
	CreatedAt, UpdatedAt time.Time
}

// Fields are the editable fields of a layout; nil keeps (or defaults) a field.
type Fields struct {
	Name, HTML, Text, Header, Footer *string
	// BrandPrimary, … set a brand colour; "" takes it away.
	BrandPrimary, BrandBackground, BrandText, BrandLink *string
	// Default makes the layout the account's default (true) or no longer (false).
	Default *bool
}

// Service manages layouts.
type Service struct {
	pool *pgxpool.Pool
}

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

func fromStore(l store.Layout) Layout {
	return Layout{ID: l.ID, Name: l.Name, HTML: l.Html, Text: l.Text, Header: l.Header, Footer: l.Footer,
		Brand: brandOf(&l), Default: l.IsDefault, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

func brandOf(l *store.Layout) Brand {
	if l == nil {
		return Brand{}
	}
	return Brand{Primary: l.BrandPrimary, Background: l.BrandBackground, Text: l.BrandText, Link: l.BrandLink}
}

var hexColour = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// colours checks fields' brand colours, lower-cased in place: 422 naming the
// colour under /brand.
func colours(f *Fields) error {
	for _, c := range []struct {
		name string
		v    *string
	}{{"primary", f.BrandPrimary}, {"background", f.BrandBackground}, {"text", f.BrandText}, {"link", f.BrandLink}} {
		if c.v == nil || *c.v == "" {
			continue
		}
		if !hexColour.MatchString(*c.v) {
			return apperr.Invalidf("/brand/"+c.name, "brand %s must be a colour written #rrggbb (or empty for none), not %q", c.name, *c.v)
		}
		*c.v = strings.ToLower(*c.v)
	}
	return nil
}

// brandTokens replaces the {{brand.*}} tokens in s by l's colours (or their defaults).
func brandTokens(l *store.Layout, s string) string {
	if !strings.Contains(s, "{{brand.") {
		return s
	}
	b := brandOf(l)
	return strings.NewReplacer(
		"{{brand.primary}}", cmp.Or(b.Primary, BrandDefaults.Primary),
		"{{brand.background}}", cmp.Or(b.Background, BrandDefaults.Background),
		"{{brand.text}}", cmp.Or(b.Text, BrandDefaults.Text),
		"{{brand.link}}", cmp.Or(b.Link, BrandDefaults.Link),
	).Replace(s)
}

// check refuses a layout that cannot frame content: its HTML needs exactly one
// {{content}}, its text (when it has one) too, and framing a sample body must
// parse and render within the limits of HTML content.
func check(l store.Layout) error {
	n := strings.TrimSpace(l.Name)
	if n == "" || len(n) > 200 {
		return apperr.Invalidf("/name", "name must be 1 to 200 characters")
	}
	if c := strings.Count(l.Html, Token); c != 1 {
		return apperr.Invalidf("/html", "html must contain %s exactly once (found %d)", Token, c)
	}
	if l.Text != "" && strings.Count(l.Text, Token) != 1 {
		return apperr.Invalidf("/text", "text must be empty or contain %s exactly once", Token)
	}
	if len(l.Html) > markdown.MaxBytes || len(l.Text) > markdown.MaxBytes {
		return apperr.Invalidf("/html", "a layout's html and text are at most %d bytes each", markdown.MaxBytes)
	}
	for _, tok := range []string{HeaderToken, FooterToken} {
		if c := strings.Count(l.Html, tok); c > 1 {
			return apperr.Invalidf("/html", "html may contain %s at most once (found %d)", tok, c)
		}
	}
	for _, part := range []struct{ ptr, src string }{{"/header", l.Header}, {"/footer", l.Footer}} {
		if len(part.src) > markdown.MaxBytes {
			return apperr.Invalidf(part.ptr, "a layout's %s is at most %d bytes", part.ptr[1:], markdown.MaxBytes)
		}
		for _, tok := range []string{Token, HeaderToken, FooterToken} {
			if strings.Contains(part.src, tok) {
				return apperr.Invalidf(part.ptr, "%s is a fragment of the frame and cannot contain %s", part.ptr[1:], tok)
			}
		}
		// Each fragment parses and renders on its own, so that an error names it.
		if part.src == "" {
			continue
		}
		if err := render.Validate("sample", brandTokens(&l, part.src), ""); err != nil {
			return repointTo(err, part.ptr)
		}
	}
	html, text := frame(&l, "<p>sample</p>", "sample")
	if err := render.Validate("sample", html, text); err != nil {
		return repoint(err)
	}
	return nil
}

// repointTo names the layout's field ptr (/header, /footer) in a render error
// about the html template of a fragment rendered on its own.
func repointTo(err error, ptr string) error {
	return rename(err, map[string]string{"/html_template": ptr})
}

// repoint names a layout's fields in a render error about the framed sample.
func repoint(err error) error {
	return rename(err, map[string]string{"/html_template": "/html", "/text_template": "/text"})
}

// rename moves the fields of a render error to the layout's fields in to (render
// pointer → layout pointer), and makes their text name the layout's field (html,
// text, header, footer) rather than the "html template" or "text template" that
// render checked.
func rename(err error, to map[string]string) error {
	e, ok := err.(*apperr.Error)
	if !ok {
		return err
	}
	out := *e
	out.Fields = nil
	for _, f := range e.Fields {
		if ptr, ok := to[f.Pointer]; ok {
			f.Detail = fieldText(f.Detail, f.Pointer, ptr)
			if out.Message == e.Message {
				out.Message = fieldText(e.Message, f.Pointer, ptr)
			}
			f.Pointer = ptr
		}
		out.Fields = append(out.Fields, f)
	}
	return &out
}

// fieldText is msg, render's text about the template at pointer from, naming the
// layout's field at pointer to instead ("html template does not execute: html:1:7:
// …" → "footer does not execute: footer:1:7: …").
func fieldText(msg, from, to string) string {
	part, field := strings.TrimSuffix(from[1:], "_template"), to[1:]
	rest, ok := strings.CutPrefix(msg, part+" template")
	if !ok {
		return msg
	}
	if part != field {
		rest = strings.NewReplacer(" "+part+":", " "+field+":", `"`+part+`"`, `"`+field+`"`).Replace(rest)
	}
	return field + rest
}

// frame puts a body in l (nil: no layout): its header and footer in their
// places (around {{content}} when the frame names none), its brand colours for
// their tokens, then the body for {{content}}, last, so that nothing in the body
// is read as a token.
func frame(l *store.Layout, html, text string) (string, string) {
	if l == nil {
		return html, text
	}
	h := l.Html
	if !strings.Contains(h, HeaderToken) {
		h = strings.Replace(h, Token, HeaderToken+Token, 1)
	}
	if !strings.Contains(h, FooterToken) {
		h = strings.Replace(h, Token, Token+FooterToken, 1)
	}
	h = strings.Replace(h, HeaderToken, l.Header, 1)
	h = strings.Replace(h, FooterToken, l.Footer, 1)
	h = strings.Replace(brandTokens(l, h), Token, html, 1)
	if l.Text == "" {
		return h, text
	}
	return h, strings.Replace(l.Text, Token, text, 1)
}

// Compose converts md and frames it in the account's layout layoutID, or in the
// account's default layout when layoutID is nil (no frame when there is none). It
// reads through q, so it sees the caller's transaction. Errors name /markdown and
// /layout_id; another account's layout is not found.
func Compose(ctx context.Context, q *store.Queries, accountID int64, layoutID *int64, md string) (html, text string, err error) {
	return ComposeContent(ctx, q, accountID, layoutID, "markdown", md, nil)
}

// ComposeContent composes content of type typ ("markdown": md; "blocks": the
// block design) in its layout as Compose does. Errors name /markdown, /blocks
// (and the field under it) and /layout_id.
func ComposeContent(ctx context.Context, q *store.Queries, accountID int64, layoutID *int64, typ, md string, design []byte) (html, text string, err error) {
	var l *store.Layout
	if layoutID != nil {
		row, err := q.LayoutGetShare(ctx, store.LayoutGetShareParams{AccountID: accountID, ID: *layoutID})
		if postgres.NoRows(err) {
			return "", "", apperr.Invalidf("/layout_id", "layout %d not found", *layoutID)
		} else if err != nil {
			return "", "", err
		}
		l = &row
	} else {
		row, err := q.LayoutGetDefaultShare(ctx, accountID)
		if err == nil {
			l = &row
		} else if !postgres.NoRows(err) {
			return "", "", err
		}
	}
	if typ == "blocks" {
		// The layout's brand colours are the design's defaults.
		if html, text, err = blocks.ConvertBrand(design, brandOf(l)); err != nil {
			return "", "", err
		}
	} else {
		conv, err := markdown.Convert(md)
		if err != nil {
			return "", "", apperr.Invalidf("/markdown", "markdown %s", err.Error())
		}
		html, text = conv.HTML, conv.Text
	}
	html, text = frame(l, html, text)
	return html, text, nil
}

// recompose composes again the Markdown and block templates and draft campaigns that layout
// id frames (and, when isDefault, those that name no layout), in q's transaction.
// A body that no longer renders in the changed frame refuses the change.
func recompose(ctx context.Context, q *store.Queries, accountID, id int64, isDefault bool) error {
	tpls, err := q.TemplateMarkdownByLayout(ctx, store.TemplateMarkdownByLayoutParams{AccountID: accountID, LayoutID: &id, IsDefault: isDefault})
	if err != nil {
		return err
	}
	for _, t := range tpls {
		html, text, err := ComposeContent(ctx, q, accountID, t.LayoutID, t.ContentType, t.Markdown, t.Blocks)
		if err == nil {
			err = validateFor(t.Subject, html, text, t.SampleData)
		}
		if err != nil {
			return dependent("template", t.ID, err)
		}
		if err := q.TemplateSetComposed(ctx, store.TemplateSetComposedParams{AccountID: accountID, ID: t.ID, Html: html, Text: text}); err != nil {
			return err
		}
	}
	drafts, err := q.CampaignMarkdownDraftsByLayout(ctx, store.CampaignMarkdownDraftsByLayoutParams{AccountID: accountID, LayoutID: &id, IsDefault: isDefault})
	if err != nil {
		return err
	}
	for _, c := range drafts {
		html, text, err := ComposeContent(ctx, q, accountID, c.LayoutID, c.ContentType, c.Markdown, c.Blocks)
		if err == nil {
			err = render.Validate(c.Subject, html, text)
		}
		if err != nil {
			return dependent("campaign", c.ID, err)
		}
		if err := q.CampaignSetComposed(ctx, store.CampaignSetComposedParams{AccountID: accountID, ID: c.ID, Html: html, Text: text}); err != nil {
			return err
		}
	}
	return nil
}

// validateFor renders a template as saving it does: for the sample recipient
// with the template's sample data.
func validateFor(subject, html, text string, sample []byte) error {
	tpl, err := render.Parse(subject, html, text)
	if err != nil {
		return err
	}
	r := render.Sample
	r.Attributes = sample
	_, err = tpl.Render(r, render.SampleUnsubscribeURL)
	return err
}

// dependent says which content a layout change would break.
func dependent(kind string, id int64, err error) error {
	var e *apperr.Error
	if errors.As(err, &e) && e.Code == apperr.Invalid {
		return apperr.Invalidf("/html", "%s %d would no longer render in this layout: %s", kind, id, e.Message)
	}
	return err
}

// Create stores a layout after checking it.
func (s *Service) Create(ctx context.Context, accountID int64, f Fields) (Layout, error) {
	if err := colours(&f); err != nil {
		return Layout{}, err
	}
	row := store.Layout{Name: optional.Value(f.Name), Html: optional.Value(f.HTML), Text: optional.Value(f.Text),
		Header: optional.Value(f.Header), Footer: optional.Value(f.Footer),
		BrandPrimary: optional.Value(f.BrandPrimary), BrandBackground: optional.Value(f.BrandBackground),
		BrandText: optional.Value(f.BrandText), BrandLink: optional.Value(f.BrandLink)}
	row.Name = strings.TrimSpace(row.Name)
	if err := check(row); err != nil {
		return Layout{}, err
	}
	var out store.Layout
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		var err error
		if out, err = q.LayoutCreate(ctx, store.LayoutCreateParams{AccountID: accountID, Name: row.Name, Html: row.Html, Text: row.Text,
			Header: row.Header, Footer: row.Footer, BrandPrimary: row.BrandPrimary, BrandBackground: row.BrandBackground,
			BrandText: row.BrandText, BrandLink: row.BrandLink}); err != nil {
			return postgres.Error(err, "a layout with this name")
		}
		audit.SetTarget(ctx, strconv.FormatInt(out.ID, 10))
		if f.Default != nil && *f.Default {
			out.IsDefault = true
			return setDefault(ctx, q, accountID, out.ID, true)
		}
		return nil
	})
	if err != nil {
		return Layout{}, err
	}
	return fromStore(out), nil
}

// setDefault makes id the account's default layout (or no longer) and recomposes
// the content that names no layout.
func setDefault(ctx context.Context, q *store.Queries, accountID, id int64, on bool) error {
	if on {
		if err := q.LayoutClearDefault(ctx, store.LayoutClearDefaultParams{AccountID: accountID, ID: id}); err != nil {
			return err
		}
	}
	if err := q.LayoutSetDefault(ctx, store.LayoutSetDefaultParams{AccountID: accountID, ID: id, IsDefault: on}); err != nil {
		return err
	}
	return recompose(ctx, q, accountID, 0, true)
}

// Get returns one layout.
func (s *Service) Get(ctx context.Context, accountID, id int64) (Layout, error) {
	l, err := store.New(s.pool).LayoutGet(ctx, store.LayoutGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Layout{}, postgres.Error(err, "layout")
	}
	return fromStore(l), nil
}

// List returns up to limit layouts after afterID in id order.
func (s *Service) List(ctx context.Context, accountID, afterID int64, limit int) ([]Layout, error) {
	rows, err := store.New(s.pool).LayoutList(ctx, store.LayoutListParams{AccountID: accountID, AfterID: afterID, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Layout, len(rows))
	for i, r := range rows {
		out[i] = fromStore(r)
	}
	return out, nil
}

// Update changes a layout and, in the same transaction, recomposes every template
// and draft campaign it frames; a bad change changes nothing. Campaigns approved
// before keep what approval pinned.
func (s *Service) Update(ctx context.Context, accountID, id int64, f Fields) (Layout, error) {
	if f.Name != nil {
		n := strings.TrimSpace(*f.Name)
		f.Name = &n
	}
	if err := colours(&f); err != nil {
		return Layout{}, err
	}
	var out store.Layout
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		var err error
		out, err = q.LayoutUpdate(ctx, store.LayoutUpdateParams{AccountID: accountID, ID: id, Name: f.Name, Html: f.HTML, Text: f.Text,
			Header: f.Header, Footer: f.Footer, BrandPrimary: f.BrandPrimary, BrandBackground: f.BrandBackground,
			BrandText: f.BrandText, BrandLink: f.BrandLink})
		if err != nil {
			return postgres.Error(err, "layout")
		}
		if err := check(out); err != nil {
			return err
		}
		if f.Default != nil && *f.Default != out.IsDefault {
			out.IsDefault = *f.Default
			if err := setDefault(ctx, q, accountID, id, *f.Default); err != nil {
				return err
			}
		}
		return recompose(ctx, q, accountID, id, out.IsDefault)
	})
	if apperr.Is(err, apperr.Conflict) {
		return Layout{}, apperr.New(apperr.Conflict, "a layout with this name already exists")
	}
	if err != nil {
		return Layout{}, err
	}
	return fromStore(out), nil
}

// Delete removes a layout that no template or draft campaign names and that is
// not the account's default (409 otherwise).
func (s *Service) Delete(ctx context.Context, accountID, id int64) error {
	var n int64
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if err := q.LayoutRelease(ctx, store.LayoutReleaseParams{AccountID: accountID, ID: &id}); err != nil {
			return err
		}
		var err error
		n, err = q.LayoutDelete(ctx, store.LayoutDeleteParams{AccountID: accountID, ID: id})
		if err == nil && n == 0 {
			ok, err := q.LayoutExists(ctx, store.LayoutExistsParams{AccountID: accountID, ID: id})
			if err != nil {
				return err
			}
			if ok {
				return apperr.New(apperr.Conflict, "this layout is the account's default or a template or draft campaign uses it; change them before deleting it")
			}
			return apperr.New(apperr.NotFound, "layout not found")
		}
		return err
	})
	return err
}
