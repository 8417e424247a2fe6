package layout

import (
	"context"

	"github.com/sendonce/sendonce/api"
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
	return wire(a.Service.Create(ctx, accountID, Fields{Name: &in.Name, HTML: &in.Html, Text: in.Text, Default: in.Default}))
}

// Get returns one layout (Service.Get).
func (a API) Get(ctx context.Context, accountID, id int64) (api.Layout, error) {
	return wire(a.Service.Get(ctx, accountID, id))
}

// Update changes the fields in present (Service.Update).
func (a API) Update(ctx context.Context, accountID, id int64, in api.LayoutUpdate) (api.Layout, error) {
	return wire(a.Service.Update(ctx, accountID, id, Fields{Name: in.Name, HTML: in.Html, Text: in.Text, Default: in.Default}))
}

func wire(l Layout, err error) (api.Layout, error) {
	if err != nil {
		return api.Layout{}, err
	}
	return toAPILayout(l), nil
}

func toAPILayout(l Layout) api.Layout {
	return api.Layout{Id: l.ID, Name: l.Name, Html: l.HTML, Text: l.Text, Default: l.Default,
		CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}
