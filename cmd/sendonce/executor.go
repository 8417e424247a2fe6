package main

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/executor"
)

// startExecutor starts the in-process executor and returns its stop function, which
// stops claiming, lets in-flight sends finish within the context's deadline, flushes
// acknowledgements and releases unsent claims.
func startExecutor(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, log *slog.Logger, reg prometheus.Registerer) (func(context.Context) error, error) {
	p, err := newProvider(cfg, log)
	if err != nil {
		return nil, err
	}
	e, err := executor.New(pool, p, executorConfig(cfg), log, reg)
	if err != nil {
		return nil, err
	}
	e.Start(ctx)
	log.Info("executor started", "provider", cfg.Provider, "workers", cfg.Workers, "batch_size", cfg.BatchSize)
	return e.Stop, nil
}

// executorConfig maps the SENDONCE_* executor settings onto the executor's Config.
func executorConfig(cfg config.Config) executor.Config {
	return executor.Config{
		Tick:                 cfg.Tick,
		Workers:              cfg.Workers,
		BatchSize:            cfg.BatchSize,
		Lease:                cfg.Lease,
		MaxAttempts:          cfg.MaxAttempts,
		BackoffBase:          cfg.BackoffBase,
		BackoffMax:           cfg.BackoffMax,
		RatePerSecond:        cfg.RatePerSecond,
		AccountRatePerSecond: cfg.AccountRatePerSecond,
		Links:                unsubscribeLinks(cfg),
		MessageIDKey:         messageIDKey(cfg),
	}
}
