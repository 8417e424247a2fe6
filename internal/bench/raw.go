package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// NewCampaign creates a draft to every confirmed subscriber of the account, with
// templates that use the subscriber's name, an attribute and the unsubscribe link,
// as a real campaign would.
func NewCampaign(ctx context.Context, pool *pgxpool.Pool, accountID int64, name string) (int64, error) {
	str := func(s string) *string { return &s }
	c, err := campaign.NewService(pool).Create(ctx, accountID, campaign.Fields{
		Name:         str(name),
		Subject:      str("News for {{.Name}}"),
		FromEmail:    str("news@bench.example.com"),
		FromName:     str("Bench"),
		HTMLTemplate: str(`<p>Hello {{.Name}},</p><p>your plan: {{.Attributes.plan}}.</p><p><a href="{{.UnsubscribeURL}}">Unsubscribe</a></p>`),
		TextTemplate: str("Hello {{.Name}},\n\nyour plan: {{.Attributes.plan}}.\n\nUnsubscribe: {{.UnsubscribeURL}}\n"),
	})
	if err != nil {
		return 0, fmt.Errorf("create campaign: %w", err)
	}
	return c.ID, nil
}

// rawLoop measures the ceiling: a fresh campaign to the same audience, built with
// the build statement, then claimed and acknowledged by the bare statements with the
// executor's batch size on RawConns connections, each looping claim → ack until a
// claim comes back empty. No rendering, no provider, no coalescing.
func rawLoop(ctx context.Context, pool *pgxpool.Pool, accountID int64, o Options) (build, raw Rate, err error) {
	id, err := NewCampaign(ctx, pool, accountID, "bench raw")
	if err != nil {
		return build, raw, err
	}
	if _, err := campaign.NewService(pool).Approve(ctx, accountID, id, nil); err != nil {
		return build, raw, err
	}
	began := time.Now()
	err = postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		c, err := q.BenchCampaignSetSending(ctx, id)
		if err != nil {
			return err
		}
		build.Rows, err = q.BenchBuildRecipients(ctx, c.ID, c.AccountID)
		return err
	})
	build.Secs = time.Since(began).Seconds()
	if err != nil {
		return build, raw, fmt.Errorf("build: %w", err)
	}
	if err := analyze(ctx, pool); err != nil {
		return build, raw, err
	}

	q := store.New(pool)
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	began = time.Now()
	for range o.RawConns {
		g.Go(func() error {
			var providerIDs []string
			for gctx.Err() == nil {
				rows, err := q.BenchClaimBatch(gctx, id, int32(o.BatchSize))
				if err != nil {
					return err
				}
				if len(rows) == 0 {
					return nil
				}
				ids := make([]int64, len(rows))
				providerIDs = providerIDs[:0]
				for i, r := range rows {
					ids[i] = r.ID
					providerIDs = append(providerIDs, "raw-"+strconv.FormatInt(r.ID, 10))
				}
				n, err := q.BenchAckMany(gctx, ids, providerIDs)
				if err != nil {
					return err
				}
				done.Add(n)
			}
			return gctx.Err()
		})
	}
	if err := g.Wait(); err != nil {
		return build, raw, err
	}
	raw.Secs = time.Since(began).Seconds()
	raw.Rows = done.Load()
	if raw.Rows != build.Rows {
		return build, raw, fmt.Errorf("raw loop acknowledged %d rows of %d", raw.Rows, build.Rows)
	}
	return build, raw, nil
}
