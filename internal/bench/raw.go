package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/store"
)

// NewCampaign creates a draft to every confirmed subscriber of the account, with
// templates that use the subscriber's name, an attribute and the unsubscribe link,
// as a real campaign would.
func NewCampaign(ctx context.Context, pool *pgxpool.Pool, accountID int64, name string) (int64, error) {
	return newCampaign(ctx, pool, accountID, name, nil)
}

// newCampaign is NewCampaign to the subscribers of lists (nil: every confirmed one).
func newCampaign(ctx context.Context, pool *pgxpool.Pool, accountID int64, name string, lists []int64) (int64, error) {
	str := func(s string) *string { return &s }
	var listIDs *[]int64
	if lists != nil {
		listIDs = &lists
	}
	c, err := campaign.NewService(pool).Create(ctx, accountID, campaign.Fields{
		ListIDs:      listIDs,
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

// rawLoop measures the ceiling: a fresh campaign to the same audience, started and
// built by the scheduler's own build (executor.StartCampaign), then claimed and acknowledged by the
// executor's bare claim and acknowledge statements, on its plan settings and in its
// round trips (executor.Planned), with its batch size on RawConns
// connections, each looping claim → ack until a claim comes back empty. No
// rendering, no provider, no coalescing across connections. The loop runs on a
// pool of its own, metered as the send's pools are: its PostgreSQL CPU per message
// is what the two statements cost with nothing else beside them but each other.
// It also returns the campaign, whose rows `bench --grow` deletes after.
func rawLoop(ctx context.Context, pool *pgxpool.Pool, accountID int64, o Options) (raw Rate, cost Cost, id int64, err error) {
	id, err = newCampaign(ctx, pool, accountID, "bench raw", o.listIDs)
	if err != nil {
		return raw, cost, id, err
	}
	if _, err := campaign.NewService(pool).Approve(ctx, accountID, id, nil); err != nil {
		return raw, cost, id, err
	}
	built, started, err := executor.StartCampaign(ctx, pool, id, nil)
	if err != nil {
		return raw, cost, id, fmt.Errorf("build: %w", err)
	}
	if !started {
		return raw, cost, id, fmt.Errorf("build: campaign %d did not start", id)
	}
	// No ANALYZE here: the executor claims right after its build too, on the same
	// statistics, so both see the same plan.
	rcfg := pool.Config()
	rcfg.MaxConns = int32(o.RawConns)
	m := newMeter(rcfg)
	m.instrument(rcfg)
	rpool, err := pgxpool.NewWithConfig(ctx, rcfg)
	if err != nil {
		return raw, cost, id, err
	}
	defer rpool.Close()
	lease := pgtype.Interval{Microseconds: (2 * time.Minute).Microseconds(), Valid: true}
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	w := m.open()
	began := time.Now()
	for range o.RawConns {
		g.Go(func() error {
			var after int64 // the executor's claim cursor
			for gctx.Err() == nil {
				rows, err := executor.Planned(gctx, rpool, (*store.Queries).ClaimPlanGeneric).SendClaimBatch(gctx, store.SendClaimBatchParams{Lease: lease, CampaignID: id, AfterID: after, N: int32(o.BatchSize)})
				if err != nil {
					return err
				}
				if len(rows) == 0 && after != 0 {
					after = 0
					continue
				}
				if len(rows) == 0 {
					return nil
				}
				after = 0
				if len(rows) == o.BatchSize {
					for _, r := range rows {
						after = max(after, r.ID)
					}
				}
				ack := store.SendAckManyParams{}
				for _, r := range rows {
					ack.Ids = append(ack.Ids, r.ID)
					ack.Attempts = append(ack.Attempts, r.Attempts) // the fence: this claim's attempts
					ack.Statuses = append(ack.Statuses, "sent")
					ack.ProviderIds = append(ack.ProviderIds, r.JobID)
					ack.Errors = append(ack.Errors, "")
					ack.RetryInUs = append(ack.RetryInUs, 0)
				}
				n, err := executor.Planned(gctx, rpool, (*store.Queries).SendPlanLinear).SendAckMany(gctx, ack)
				if err != nil {
					return err
				}
				done.Add(n)
			}
			return gctx.Err()
		})
	}
	if err := g.Wait(); err != nil {
		return raw, cost, id, err
	}
	raw.Secs = time.Since(began).Seconds()
	raw.Rows = done.Load()
	cost = m.close(w, raw.Rows)
	if raw.Rows != built.Rows {
		return raw, cost, id, fmt.Errorf("raw loop acknowledged %d rows of %d", raw.Rows, built.Rows)
	}
	return raw, cost, id, nil
}
