package optin

import (
	"context"
	"log/slog"
	"time"
)

// Purger purges the sign-ups left unconfirmed past TTL every Every (Purge). Every
// replica may run one: its batched deletes skip each other's rows.
type Purger struct {
	Service *Service
	TTL     time.Duration
	Every   time.Duration
	Log     *slog.Logger
}

// Run purges at once and then every Every until ctx ends, logging what it
// deleted and what failed.
func (p Purger) Run(ctx context.Context) {
	t := time.NewTicker(p.Every)
	defer t.Stop()
	for {
		subs, members, err := p.Service.Purge(ctx, time.Now().Add(-p.TTL))
		switch {
		case err != nil && ctx.Err() == nil:
			p.Log.Warn("opt-in purge", "err", err)
		case subs+members > 0:
			p.Log.Info("opt-in purge", "subscribers", subs, "memberships", members)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
