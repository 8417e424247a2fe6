package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/optin"
)

// startOptinPurge runs the purge of sign-ups left unconfirmed past
// SENDONCE_OPTIN_PENDING_TTL every SENDONCE_OPTIN_PURGE_INTERVAL, and returns its
// stop function. Every replica may run it: its batched deletes skip each other's
// rows (optin.Service.Purge).
func startOptinPurge(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, log *slog.Logger) func(context.Context) error {
	svc := optin.NewService(pool, nil, nil, optin.Options{})
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(cfg.OptinPurgeInterval)
		defer t.Stop()
		for {
			subs, members, err := svc.Purge(runCtx, time.Now().Add(-cfg.OptinPendingTTL))
			switch {
			case err != nil && runCtx.Err() == nil:
				log.Warn("opt-in purge", "err", err)
			case subs+members > 0:
				log.Info("opt-in purge", "subscribers", subs, "memberships", members)
			}
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return stopper(cancel, done)
}

// stopper is the stop function of a background loop: cancel it, then wait until
// done is closed or the stop's deadline passes.
func stopper(cancel context.CancelFunc, done <-chan struct{}) func(context.Context) error {
	return func(stopCtx context.Context) error {
		cancel()
		select {
		case <-done:
			return nil
		case <-stopCtx.Done():
			return stopCtx.Err()
		}
	}
}
