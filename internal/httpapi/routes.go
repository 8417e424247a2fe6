package httpapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes is the whole API on one screen. Every route here is in openapi.yaml, and a
// test holds the two to the same list.
func (s *Server) routes() {
	r := s.router
	r.Use(requestID, s.recoverer, s.observe)
	r.NotFound(s.handle(notFound))
	r.MethodNotAllowed(s.handle(methodNotAllowed))

	r.Get("/healthz", s.handle(s.healthz))
	r.Get("/readyz", s.handle(s.readyz))
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))
	r.Get("/openapi.yaml", s.handle(s.openapi))

	// Opt-outs (issue 6). /u/{token} and provider deliveries carry no API key: the
	// token's HMAC or the provider's signature authenticates them.
	r.Get("/u/{token}", s.handle(s.unsubscribePage))
	r.Post("/u/{token}", s.handle(s.unsubscribePost))
	r.Post("/v1/webhooks/{source}/{endpoint_id}", s.handle(s.deliverWebhook))
	r.Group(func(r chiRouter) {
		r.Use(s.authenticate)
		r.Post("/v1/webhook-endpoints", s.handle(s.createWebhookEndpoint))
		r.Get("/v1/webhook-endpoints", s.handle(s.listWebhookEndpoints))
		r.Get("/v1/webhook-endpoints/{id}", s.handle(s.getWebhookEndpoint))
		r.Post("/v1/webhook-endpoints/{id}/rotate", s.handle(s.rotateWebhookEndpoint))
		r.Delete("/v1/webhook-endpoints/{id}", s.handle(s.deleteWebhookEndpoint))
	})

	r.Route("/v1", func(r chiRouter) {
		r.Use(s.authenticate)
		r.Get("/account", s.handle(s.getAccount))
	})
}
