package dkim

import (
	"context"
	"strings"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/optional"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// List returns the account's keys of domain (Service.List).
func (a API) List(ctx context.Context, accountID int64, domain string) ([]api.DkimKey, error) {
	keys, err := a.Service.List(ctx, accountID, domain)
	if err != nil {
		return nil, err
	}
	out := make([]api.DkimKey, len(keys))
	for i, k := range keys {
		out[i] = toAPIDkimKey(k)
	}
	return out, nil
}

// Create adds a key for domain, inactive (Service.Create).
func (a API) Create(ctx context.Context, accountID int64, domain string, in api.DkimKeyCreate) (api.DkimKey, error) {
	return wire(a.Service.Create(ctx, accountID, domain, optional.String(in.Selector), optional.String(in.Algorithm)))
}

// Activate makes key id the one domain's mail is signed with (Service.Activate).
func (a API) Activate(ctx context.Context, accountID int64, domain string, id int64) (api.DkimKey, error) {
	return wire(a.Service.Activate(ctx, accountID, domain, id))
}

// Published reports whether a TXT record found at key's record name carries
// key (the package's Published, with the p= of the record key publishes).
func (API) Published(record string, key api.DkimKey) bool {
	_, public, _ := strings.Cut(key.Record.Value, "; p=")
	return Published(record, string(key.Algorithm), public)
}

func wire(k KeyInfo, err error) (api.DkimKey, error) {
	if err != nil {
		return api.DkimKey{}, err
	}
	return toAPIDkimKey(k), nil
}

func toAPIDkimKey(k KeyInfo) api.DkimKey {
	out := api.DkimKey{Id: k.ID, Domain: k.Domain, Selector: k.Selector, Algorithm: api.DkimKeyAlgorithm(k.Algorithm),
		Active: k.Active, ActivatedAt: k.ActivatedAt, CreatedAt: k.CreatedAt}
	out.Record.Type, out.Record.Name, out.Record.Value = "TXT", k.RecordName, k.RecordValue
	return out
}
