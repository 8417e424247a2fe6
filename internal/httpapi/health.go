package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
)

type chiRouter = chi.Router

func notFound(w http.ResponseWriter, r *http.Request) error {
	return apperr.New(apperr.NotFound, "no such route: %s %s", r.Method, r.URL.Path)
}

// methodNotAllowed answers 405 with the Allow header RFC 9110 §15.5.6 requires:
// the methods the router has for the path, HEAD wherever GET is.
func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) error {
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := m
		if m == http.MethodHead {
			probe = http.MethodGet
		}
		if s.router.Match(chi.NewRouteContext(), probe, path) {
			allow = append(allow, m)
		}
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	writeProblem(w, r, Problem{Type: problemBase + "method_not_allowed", Title: "Method not allowed",
		Status: http.StatusMethodNotAllowed, Detail: r.Method + " is not allowed on " + r.URL.Path})
	return nil
}

// healthz answers while the process is up.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	return encode(w, http.StatusOK, api.Status{Status: "ok"})
}

// readyz answers 200 when the database is reachable and has every migration this
// binary knows, 503 with a problem otherwise.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	return readiness(s.Pool, s.Logger)(w, r)
}

// readiness is the one readiness probe, on the API's address and on the metrics
// listener alike (Probes).
func readiness(pool *pgxpool.Pool, log *slog.Logger) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		unready := func(detail string) error {
			writeProblem(w, r, Problem{Type: problemBase + "not_ready", Title: "Not ready",
				Status: http.StatusServiceUnavailable, Detail: detail})
			return nil
		}
		if err := pool.Ping(ctx); err != nil {
			log.WarnContext(ctx, "readyz: database unreachable", "err", err)
			return unready("database unreachable")
		}
		current, err := postgres.MigrationsCurrent(ctx, pool)
		if err != nil {
			log.WarnContext(ctx, "readyz: migration check failed", "err", err)
			return unready("migration status unknown")
		}
		if !current {
			return unready("database migrations are pending: run `sendonce migrate`")
		}
		return encode(w, http.StatusOK, api.Status{Status: "ready"})
	}
}

// Probes serves GET /healthz and GET /readyz exactly as the API does, for a
// listener of its own (the metrics address of an executor-only process).
func Probes(pool *pgxpool.Pool, log *slog.Logger) http.Handler {
	s := &Server{Deps: Deps{Pool: pool, Logger: log}}
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", s.handle(s.healthz))
	mux.Handle("GET /readyz", s.handle(s.readyz))
	return mux
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, err := w.Write(s.OpenAPI)
	return err
}

// apiReference serves the API reference rendered from openapi.yaml: no script, its one
// style block allowed by hash.
func (s *Server) apiReference(w http.ResponseWriter, r *http.Request) error {
	s.Reference.ServeHTTP(w, r)
	return nil
}

// getAccount returns the account of the API key: the simplest authenticated call.
func (s *Server) getAccount(w http.ResponseWriter, r *http.Request) error {
	a, err := s.Accounts.Get(r.Context(), accountID(r))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIAccount(a))
}
