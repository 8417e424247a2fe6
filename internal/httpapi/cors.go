package httpapi

import (
	"net/http"

	"github.com/go-chi/cors"
)

// cors lets the dashboard origins of SENDONCE_CORS_ORIGINS call the API from a
// browser. It runs before authenticate so a preflight (which carries no key) is
// answered; with no origins configured it adds nothing.
func (s *Server) cors() func(http.Handler) http.Handler {
	if len(s.opts.CORSOrigins) == 0 {
		return func(next http.Handler) http.Handler { return next }
	}
	return cors.Handler(cors.Options{
		AllowedOrigins:   s.opts.CORSOrigins,
		AllowedMethods:   []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete},
		AllowedHeaders:   []string{"Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id", "Last-Event-ID"},
		ExposedHeaders:   []string{"Idempotent-Replayed", "Retry-After", "X-Request-Id"},
		AllowCredentials: false,
		MaxAge:           600,
	})
}
