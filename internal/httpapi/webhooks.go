package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
)

// Webhooks takes providers' event deliveries and keeps the endpoints they are
// sent to (webhook.API).
type Webhooks interface {
	// Unauthorized is the one answer to a delivery that does not authenticate,
	// with the reason for the log.
	Unauthorized(err error) error
	Deliver(ctx context.Context, source string, endpointID int64, h http.Header, body []byte) (api.WebhookDeliveryResult, error)
	Create(ctx context.Context, accountID int64, in api.WebhookEndpointCreate) (api.WebhookEndpointWithCredentials, error)
	List(ctx context.Context, accountID, afterID int64, limit int) ([]api.WebhookEndpoint, error)
	Get(ctx context.Context, accountID, id int64) (api.WebhookEndpoint, error)
	Rotate(ctx context.Context, accountID, id int64, in api.WebhookEndpointRotate) (api.WebhookEndpointWithCredentials, error)
	Delete(ctx context.Context, accountID, id int64) error
}

// webhookBodyLimit bounds a provider delivery; SendGrid batches are the largest.
const webhookBodyLimit = 5 << 20

// deliverWebhook answers POST /v1/webhooks/{source}/{endpoint_id}. There is no API
// key: the signature (or Postmark's basic auth) authenticates, checked on the raw
// body before it is parsed. 2xx means the events are committed.
func (s *Server) deliverWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(chi.URLParam(r, "endpoint_id"), 10, 64)
	if err != nil || id < 1 {
		// Answered like a bad signature, as every unknown endpoint is.
		return s.Webhooks.Unauthorized(fmt.Errorf("endpoint id %q", chi.URLParam(r, "endpoint_id")))
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
	return encode(w, http.StatusOK, res)
}

// createWebhookEndpoint answers POST /v1/webhook-endpoints; the credentials are in
// this response and never again.
func (s *Server) createWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.WebhookEndpointCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	ep, err := s.Webhooks.Create(r.Context(), accountID(r), in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, ep)
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
	eps, next := pageOf(r, "webhook-endpoints", p, eps, func(e api.WebhookEndpoint) cursor { return cursor{ID: e.Id} })
	return encode(w, http.StatusOK, api.WebhookEndpointPage{Data: eps, NextCursor: next})
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
	return encode(w, http.StatusOK, ep)
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
	ep, err := s.Webhooks.Rotate(r.Context(), accountID(r), id, in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, ep)
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
