// Package httpapi is the HTTP face of sendonce: routes, authentication, JSON in and
// out, and the one translation of application errors into RFC 9457 problems.
package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/unsubscribe"
	"github.com/sendonce/sendonce/internal/webhook"
)

// Deps is everything the API needs; run builds it once.
type Deps struct {
	Pool     *pgxpool.Pool
	Logger   *slog.Logger
	Config   config.Config
	Registry *prometheus.Registry
	Accounts *account.Service
	// OpenAPI is the contract served at GET /openapi.yaml.
	OpenAPI []byte

	// Opt-outs (issue 6): one-click unsubscribe and provider webhooks.
	Unsubscribe *unsubscribe.Service
	Webhooks    *webhook.Service
}

// Server serves the API.
type Server struct {
	Deps
	router  chi.Router
	metrics *httpMetrics
}

// NewServer returns the API handler with every route of routes.go.
func NewServer(d Deps) http.Handler {
	if d.Registry == nil {
		d.Registry = prometheus.NewRegistry()
	}
	s := &Server{Deps: d, router: chi.NewRouter(), metrics: newHTTPMetrics(d.Registry)}
	s.optoutDefaults()
	s.routes()
	return s.router
}

// apiHandler is a handler that returns its error instead of writing it.
type apiHandler func(w http.ResponseWriter, r *http.Request) error

// handle adapts an apiHandler: a returned error is written as a problem.
func (s *Server) handle(h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			writeError(w, r, s.Logger, err)
		}
	}
}
