package person

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// Activity is a page of the subscriber's activity, newest first (Service.Activity):
// before the cursor whose key is beforeKey ("time|kind", "" for the first page) and
// whose id is beforeID.
func (a API) Activity(ctx context.Context, accountID, subscriberID int64, beforeKey string, beforeID int64, limit int) ([]api.ActivityItem, error) {
	var before *Cursor
	if beforeKey != "" {
		at, kind, ok := strings.Cut(beforeKey, "|")
		t, terr := time.Parse(time.RFC3339Nano, at)
		if !ok || terr != nil {
			return nil, apperr.Invalidf("/cursor", "cursor is not valid")
		}
		before = &Cursor{At: t, Kind: kind, ID: beforeID}
	}
	items, err := a.Service.Activity(ctx, accountID, subscriberID, before, limit)
	if err != nil {
		return nil, err
	}
	return toAPIActivity(items), nil
}

// ExportSubscriber is the subscriber's data (Service.ExportSubscriber).
func (a API) ExportSubscriber(ctx context.Context, accountID, subscriberID int64) (api.PersonExport, error) {
	return wire(a.Service.ExportSubscriber(ctx, accountID, subscriberID))
}

// ExportAddress is the data kept about an address (Service.ExportAddress).
func (a API) ExportAddress(ctx context.Context, accountID int64, email, lower string) (api.PersonExport, error) {
	return wire(a.Service.ExportAddress(ctx, accountID, email, lower))
}

func wire(x Export, err error) (api.PersonExport, error) {
	if err != nil {
		return api.PersonExport{}, err
	}
	return toAPIExport(x), nil
}

func toAPIActivity(items []Item) []api.ActivityItem {
	out := make([]api.ActivityItem, len(items))
	for i, x := range items {
		data := map[string]any{}
		_ = json.Unmarshal(x.Data, &data) // built by jsonb_build_object: always an object
		out[i] = api.ActivityItem{At: x.At, Kind: x.Kind, Id: x.RefID, Data: data}
	}
	return out
}

func toAPIExport(x Export) api.PersonExport {
	out := api.PersonExport{GeneratedAt: x.GeneratedAt, Email: x.Email, Consents: make([]api.Consent, len(x.Consents)),
		Activity: toAPIActivity(x.Activity), Truncated: x.Truncated}
	for i, c := range x.Consents {
		out.Consents[i] = api.Consent{ListId: c.ListID, ListName: c.ListName, Status: api.ConsentStatus(c.Status),
			Source: c.Source, StatusAt: c.StatusAt, CreatedAt: c.CreatedAt}
	}
	if p := x.Profile; p != nil {
		attrs := map[string]any{}
		_ = json.Unmarshal(p.Attributes, &attrs)
		out.Profile = &api.PersonProfile{Id: p.ID, Email: p.Email, Name: p.Name, Attributes: attrs,
			Status: api.PersonProfileStatus(p.Status), Signup: p.Signup, OptinSentAt: p.OptinSentAt,
			CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
	}
	return out
}
