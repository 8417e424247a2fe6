package main

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/event"
)

// startEvents starts the event delivery worker (fan-out, signed deliveries,
// retention) and returns its stop function, which waits for the deliveries in
// flight (each at most event.Timeout) or the context's deadline.
func startEvents(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, log *slog.Logger, reg prometheus.Registerer) func(context.Context) error {
	w := event.NewWorker(pool, event.WorkerOptions{
		Guard:       event.Guard{AllowHTTP: cfg.EventAllowHTTP, AllowPrivate: cfg.EventAllowPrivate},
		Concurrency: cfg.EventConcurrency, PerEndpoint: cfg.EventEndpointConcurrency, Heartbeat: cfg.Heartbeat,
		Retention: cfg.EventRetention, Registry: reg, Logger: log,
	})
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(runCtx)
	}()
	log.Info("event delivery started", "allow_private", cfg.EventAllowPrivate, "allow_http", cfg.EventAllowHTTP)
	return stopper(cancel, done)
}
