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

	r.Route("/v1", func(r chiRouter) {
		r.Use(s.authenticate)
		r.Get("/account", s.handle(s.getAccount))
	})
}
