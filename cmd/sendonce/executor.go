package main

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/config"
)

// startExecutor starts the in-process executor and returns its stop function.
// The executor is not built yet (issue 4): this starts nothing.
func startExecutor(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, log *slog.Logger, reg prometheus.Registerer) (func(context.Context) error, error) {
	return func(context.Context) error { return nil }, nil
}
