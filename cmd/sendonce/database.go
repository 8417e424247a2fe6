package main

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/postgres"
)

// directURL is the URL of a connection that keeps its session: SENDONCE_DIRECT_DATABASE_URL
// when the main URL goes through a transaction pooler such as PgBouncer, else the main URL.
func directURL(cfg config.Config) string {
	if cfg.DirectDatabaseURL != "" {
		return cfg.DirectDatabaseURL
	}
	return cfg.DatabaseURL
}

// migrateSession applies pending migrations. goose's lock is a session advisory lock,
// which a transaction pooler would take on one server connection and release on
// another, so with a direct URL the migrations run on a pool of their own there.
func migrateSession(ctx context.Context, cfg config.Config, pool *pgxPool) (int, error) {
	if cfg.DirectDatabaseURL == "" {
		return postgres.Migrate(ctx, pool)
	}
	direct, err := openDirect(ctx, cfg, 2)
	if err != nil {
		return 0, err
	}
	defer direct.Close()
	return postgres.Migrate(ctx, direct)
}

// listenPool is where the process takes its one LISTEN connection (executor and
// API share it): a small pool on the direct URL (a transaction pooler would drop
// the LISTEN at the end of the statement), or nil, meaning the main pool. The
// caller closes it after the listener stops.
func listenPool(ctx context.Context, cfg config.Config) (*pgxPool, error) {
	if cfg.DirectDatabaseURL == "" {
		return nil, nil
	}
	return openDirect(ctx, cfg, 1)
}

// openDirect opens a pool on the direct URL with pgx's default statement mode: the
// exec mode setting is for the pooled URL, and a direct session can prepare.
func openDirect(ctx context.Context, cfg config.Config, conns int32) (*pgxPool, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return postgres.Open(ctx, directURL(cfg), conns)
}

// closePool closes p when there is one.
func closePool(p *pgxPool) {
	if p != nil {
		p.Close()
	}
}
