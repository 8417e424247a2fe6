package httpapi

import (
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/webhook"
)

// webhookBodyLimit bounds a provider delivery; SendGrid batches are the largest.
const webhookBodyLimit = 5 << 20

// deliverWebhook answers POST /v1/webhooks/{source}/{endpoint_id}. There is no API
// key: the signature (or Postmark's basic auth) authenticates, checked on the raw
// body before it is parsed. 2xx means the events are committed.
func (s *Server) deliverWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(chi.URLParam(r, "endpoint_id"), 10, 64)
	if err != nil || id < 1 {
		// Answered like a bad signature, as every unknown endpoint is.
		return webhook.Unauthorized(fmt.Errorf("endpoint id %q", chi.URLParam(r, "endpoint_id")))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, webhookBodyLimit))
	if err != nil {
		return bodyReadError(err, webhookBodyLimit)
	}
	res, err := s.Webhooks.Deliver(r.Context(), chi.URLParam(r, "source"), id, r.Header, body)
	if err != nil {
		if apperr.Is(err, apperr.Unauthorized) {
			s.Logger.WarnContext(r.Context(), "webhook rejected", "source", chi.URLParam(r, "source"),
				"endpoint", id, "err", err)
		}
		return err
	}
	return encode(w, http.StatusOK, api.WebhookDeliveryResult{Events: res.Events, Applied: res.Applied,
		Replayed: res.Replayed, Suppressed: res.Suppressed})
}

func toAPIWebhookEndpoint(e webhook.Endpoint) api.WebhookEndpoint {
	out := api.WebhookEndpoint{Id: e.ID, Source: e.Source, Name: e.Name, Path: e.Path,
		PreviousSecretExpiresAt: e.PreviousSecretExpiresAt, SubscribeUrl: e.SubscribeURL, CreatedAt: e.CreatedAt}
	if len(e.TopicARNs) > 0 {
		out.TopicArns = &e.TopicARNs
	}
	return out
}

func toAPIWebhookEndpointWithCredentials(e webhook.Endpoint, c webhook.Credentials) api.WebhookEndpointWithCredentials {
	ep := toAPIWebhookEndpoint(e)
	out := api.WebhookEndpointWithCredentials{Id: ep.Id, Source: ep.Source, Name: ep.Name, Path: ep.Path,
		TopicArns: ep.TopicArns, PreviousSecretExpiresAt: ep.PreviousSecretExpiresAt, SubscribeUrl: ep.SubscribeUrl,
		CreatedAt: ep.CreatedAt}
	out.Credentials.Secret, out.Credentials.Username, out.Credentials.Password =
		ifSet[string](c.Secret), ifSet[string](c.Username), ifSet[string](c.Password)
	return out
}

// createWebhookEndpoint answers POST /v1/webhook-endpoints; the credentials are in
// this response and never again.
func (s *Server) createWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.WebhookEndpointCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	create := webhook.CreateInput{Source: string(in.Source), Name: unset(in.Name), Secret: unset(in.Secret)}
	if in.TopicArns != nil {
		create.TopicARNs = *in.TopicArns
	}
	ep, creds, err := s.Webhooks.Create(r.Context(), accountID(r), create)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPIWebhookEndpointWithCredentials(ep, creds))
}

// listWebhookEndpoints answers GET /v1/webhook-endpoints?limit=&cursor= (no secrets).
func (s *Server) listWebhookEndpoints(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "webhook-endpoints")
	if err != nil {
		return err
	}
	eps, err := s.Webhooks.List(r.Context(), accountID(r), p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	eps, next := pageOf(r, "webhook-endpoints", p, eps, func(e webhook.Endpoint) cursor { return cursor{ID: e.ID} })
	out := api.WebhookEndpointPage{Data: make([]api.WebhookEndpoint, len(eps)), NextCursor: next}
	for i, x := range eps {
		out.Data[i] = toAPIWebhookEndpoint(x)
	}
	return encode(w, http.StatusOK, out)
}

// getWebhookEndpoint answers GET /v1/webhook-endpoints/{id}.
func (s *Server) getWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	ep, err := s.Webhooks.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIWebhookEndpoint(ep))
}

// rotateWebhookEndpoint answers POST /v1/webhook-endpoints/{id}/rotate.
func (s *Server) rotateWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	var in api.WebhookEndpointRotate
	if r.ContentLength != 0 {
		if in, err = decode[api.WebhookEndpointRotate](w, r, s.opts.MaxBodyBytes); err != nil {
			return err
		}
	}
	rotate := webhook.RotateInput{Secret: unset(in.Secret)}
	if in.GraceSeconds != nil {
		g := int64(*in.GraceSeconds)
		rotate.GraceSeconds = &g
	}
	ep, creds, err := s.Webhooks.Rotate(r.Context(), accountID(r), id, rotate)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIWebhookEndpointWithCredentials(ep, creds))
}

// deleteWebhookEndpoint answers DELETE /v1/webhook-endpoints/{id}.
func (s *Server) deleteWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	if err := s.Webhooks.Delete(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// webhookEndpointID reads a positive id from the path; anything else is a 404, as an id of
// another tenant would be.
func webhookEndpointID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id < 1 {
		return 0, apperr.New(apperr.NotFound, "not found")
	}
	return id, nil
}
