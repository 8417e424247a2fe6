package layout

import (
	"context"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/optional"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// List returns a page of the account's layouts (Service.List).
func (a API) List(ctx context.Context, accountID, afterID int64, limit int) ([]api.Layout, error) {
	rows, err := a.Service.List(ctx, accountID, afterID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.Layout, len(rows))
	for i, x := range rows {
		out[i] = toAPILayout(x)
	}
	return out, nil
}

// Create adds a layout (Service.Create).
func (a API) Create(ctx context.Context, accountID int64, in api.LayoutCreate) (api.Layout, error) {
	return wire(a.Service.Create(ctx, accountID, fields(&in.Name, &in.Html, in.Text, in.Header, in.Footer, in.Brand, in.Default)))
}

// Get returns one layout (Service.Get).
func (a API) Get(ctx context.Context, accountID, id int64) (api.Layout, error) {
	return wire(a.Service.Get(ctx, accountID, id))
}

// Update changes the fields in present (Service.Update).
func (a API) Update(ctx context.Context, accountID, id int64, in api.LayoutUpdate) (api.Layout, error) {
	return wire(a.Service.Update(ctx, accountID, id, fields(in.Name, in.Html, in.Text, in.Header, in.Footer, in.Brand, in.Default)))
}

func wire(l Layout, err error) (api.Layout, error) {
	if err != nil {
		return api.Layout{}, err
	}
	return toAPILayout(l), nil
}

func toAPILayout(l Layout) api.Layout {
	return api.Layout{Id: l.ID, Name: l.Name, Html: l.HTML, Text: l.Text, Header: l.Header, Footer: l.Footer,
		Brand: api.LayoutBrand{Primary: optional.NonZero(l.Brand.Primary), Background: optional.NonZero(l.Brand.Background),
			Text: optional.NonZero(l.Brand.Text), Link: optional.NonZero(l.Brand.Link)},
		Default: l.Default, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

// fields are the Fields of a create or an update.
func fields(name, html, text, header, footer *string, brand *api.LayoutBrand, def *bool) Fields {
	f := Fields{Name: name, HTML: html, Text: text, Header: header, Footer: footer, Default: def}
	if brand != nil {
		f.BrandPrimary, f.BrandBackground, f.BrandText, f.BrandLink = brand.Primary, brand.Background, brand.Text, brand.Link
	}
	return f
}
