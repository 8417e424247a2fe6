package webhook

import (
	"context"
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/optional"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// Unauthorized is the one answer to a delivery that does not authenticate (the
// package's Unauthorized).
func (API) Unauthorized(err error) error { return Unauthorized(err) }

// Deliver authenticates and applies one provider delivery (Service.Deliver).
func (a API) Deliver(ctx context.Context, source string, endpointID int64, h http.Header, body []byte) (api.WebhookDeliveryResult, error) {
	res, err := a.Service.Deliver(ctx, source, endpointID, h, body)
	if err != nil {
		return api.WebhookDeliveryResult{}, err
	}
	return api.WebhookDeliveryResult{Events: res.Events, Applied: res.Applied,
		Replayed: res.Replayed, Suppressed: res.Suppressed}, nil
}

// Create adds an endpoint; its credentials are in this answer only (Service.Create).
func (a API) Create(ctx context.Context, accountID int64, in api.WebhookEndpointCreate) (api.WebhookEndpointWithCredentials, error) {
	create := CreateInput{Source: string(in.Source), Name: optional.String(in.Name), Secret: optional.String(in.Secret)}
	if in.TopicArns != nil {
		create.TopicARNs = *in.TopicArns
	}
	ep, creds, err := a.Service.Create(ctx, accountID, create)
	if err != nil {
		return api.WebhookEndpointWithCredentials{}, err
	}
	return toAPIWebhookEndpointWithCredentials(ep, creds), nil
}

// List returns a page of the account's endpoints, without secrets (Service.List).
func (a API) List(ctx context.Context, accountID, afterID int64, limit int) ([]api.WebhookEndpoint, error) {
	eps, err := a.Service.List(ctx, accountID, afterID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.WebhookEndpoint, len(eps))
	for i, x := range eps {
		out[i] = toAPIWebhookEndpoint(x)
	}
	return out, nil
}

// Get returns one endpoint, without secrets (Service.Get).
func (a API) Get(ctx context.Context, accountID, id int64) (api.WebhookEndpoint, error) {
	ep, err := a.Service.Get(ctx, accountID, id)
	if err != nil {
		return api.WebhookEndpoint{}, err
	}
	return toAPIWebhookEndpoint(ep), nil
}

// Rotate replaces an endpoint's secret (Service.Rotate).
func (a API) Rotate(ctx context.Context, accountID, id int64, in api.WebhookEndpointRotate) (api.WebhookEndpointWithCredentials, error) {
	rotate := RotateInput{Secret: optional.String(in.Secret)}
	if in.GraceSeconds != nil {
		g := int64(*in.GraceSeconds)
		rotate.GraceSeconds = &g
	}
	ep, creds, err := a.Service.Rotate(ctx, accountID, id, rotate)
	if err != nil {
		return api.WebhookEndpointWithCredentials{}, err
	}
	return toAPIWebhookEndpointWithCredentials(ep, creds), nil
}

func toAPIWebhookEndpoint(e Endpoint) api.WebhookEndpoint {
	out := api.WebhookEndpoint{Id: e.ID, Source: e.Source, Name: e.Name, Path: e.Path,
		PreviousSecretExpiresAt: e.PreviousSecretExpiresAt, SubscribeUrl: e.SubscribeURL, CreatedAt: e.CreatedAt}
	if len(e.TopicARNs) > 0 {
		out.TopicArns = &e.TopicARNs
	}
	return out
}

func toAPIWebhookEndpointWithCredentials(e Endpoint, c Credentials) api.WebhookEndpointWithCredentials {
	ep := toAPIWebhookEndpoint(e)
	out := api.WebhookEndpointWithCredentials{Id: ep.Id, Source: ep.Source, Name: ep.Name, Path: ep.Path,
		TopicArns: ep.TopicArns, PreviousSecretExpiresAt: ep.PreviousSecretExpiresAt, SubscribeUrl: ep.SubscribeUrl,
		CreatedAt: ep.CreatedAt}
	out.Credentials.Secret, out.Credentials.Username, out.Credentials.Password =
		optional.NonZero(c.Secret), optional.NonZero(c.Username), optional.NonZero(c.Password)
	return out
}
