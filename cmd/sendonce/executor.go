package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/provider"
)

// startExecutor starts the in-process executor and returns its stop function, which
// stops claiming, lets in-flight sends finish within the context's deadline, flushes
// acknowledgements, releases unsent claims and closes the provider.
func startExecutor(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, log *slog.Logger, reg prometheus.Registerer) (func(context.Context) error, error) {
	p, err := provider.New(cfg.Providers, log)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	links, err := unsubscribeLinks(cfg)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("configuration: SENDONCE_UNSUBSCRIBE_SECRET: %w", err)
	}
	e, err := executor.New(pool, p, executorConfig(cfg, links), log, reg)
	if err != nil {
		p.Close()
		return nil, err
	}
	e.Start(ctx)
	log.Info("executor started", "provider", cfg.Provider, "idempotent", p.Idempotent(),
		"workers", cfg.Workers, "batch_size", cfg.BatchSize)
	return func(ctx context.Context) error {
		return errors.Join(e.Stop(ctx), p.Close())
	}, nil
}

// executorConfig maps the SENDONCE_* executor settings onto the executor's Config.
func executorConfig(cfg config.Config, links func(accountID, campaignID, subscriberID int64) (string, string)) executor.Config {
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
		Links:                links,
	}
}
