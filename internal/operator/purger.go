package operator

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/media"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Purger removes the accounts the operator deleted: each one's rows table by
// table, Batch rows per statement with Pause between statements
// (account.Service.Purge), then the account. It runs beside the executor
// (startstop); replicas may work on one account at once, which costs only
// repeated empty statements.
type Purger struct {
	Pool     *pgxpool.Pool
	Accounts *account.Service
	// Media removes a purged account's image bytes from the media store (nil:
	// none, or the bytes are in PostgreSQL and went with the rows).
	Media *media.Service
	Batch int32
	Pause time.Duration
	// Every is how often it looks for a deleted account when it found none.
	Every time.Duration
	Log   *slog.Logger
}

// Run purges until ctx ends.
func (p Purger) Run(ctx context.Context) {
	every := p.Every
	if every <= 0 {
		every = time.Minute
	}
	for ctx.Err() == nil {
		id, err := p.PurgeOne(ctx)
		if err != nil && ctx.Err() == nil {
			p.Log.Error("account purge", "account_id", id, "err", err)
		}
		if id != 0 && err == nil {
			continue // the next one at once
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// PurgeOne purges the oldest deleted account and returns its id (0: none left).
func (p Purger) PurgeOne(ctx context.Context) (int64, error) {
	id, err := store.New(p.Pool).OperatorAccountNextDeleted(ctx)
	if postgres.NoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	start := time.Now()
	n, err := p.Accounts.Purge(ctx, id, p.Batch, p.Pause)
	if err != nil {
		return id, err
	}
	// The rows first, then the bytes they named: a failure here leaves bytes no
	// row names, which the media sweep removes within the hour.
	var files int
	if p.Media != nil {
		if files, err = p.Media.PurgeAccount(ctx, id); err != nil {
			p.Log.Error("purged account's media files", "account_id", id, "err", err)
		}
	}
	p.Log.Info("deleted account purged", "account_id", id, "rows", n, "media_files", files, "took", time.Since(start).Round(time.Millisecond))
	return id, nil
}
