package executor

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sendonce/sendonce/internal/store"
)

// maintain runs the rescuer, the cancel sweep, the finalizer and the queued gauge
// every Maintenance interval. Every replica runs it; each step is a SKIP LOCKED or
// compare-and-set statement, so they do not collide.
func (e *Executor) maintain(ctx context.Context) {
	defer e.loops.Done()
	for {
		if err := e.maintainOnce(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("maintenance", "err", err)
		}
		if !sleep(ctx, e.cfg.Maintenance) {
			return
		}
	}
}

func (e *Executor) maintainOnce(ctx context.Context) error {
	if _, err := e.rescue(ctx); err != nil {
		return err
	}
	if err := e.sweepCancelled(ctx); err != nil {
		return err
	}
	campaigns, err := e.q.CampaignListSending(ctx)
	if err != nil {
		return err
	}
	e.metrics.activeCampaigns.Set(float64(len(campaigns)))
	for _, c := range campaigns {
		e.finish(ctx, c.ID)
	}
	n, err := e.q.SendCountQueued(ctx)
	if err != nil {
		return err
	}
	e.metrics.queuedRows.Set(float64(n))
	_, err = e.retain(ctx)
	return err
}

// rescue settles rows whose lease expired while sending: they were in flight when a
// process died. It returns how many rows it moved.
func (e *Executor) rescue(ctx context.Context) (int, error) {
	total := 0
	for {
		rows, err := e.q.SendRescueExpired(ctx, store.SendRescueExpiredParams{
			Idempotent:  e.provider.Idempotent(),
			MaxAttempts: int32(e.cfg.MaxAttempts),
			Now:         e.now(),
			BackoffBase: interval(e.cfg.BackoffBase),
			BackoffMax:  interval(e.cfg.BackoffMax),
		})
		if err != nil {
			return total, err
		}
		for _, r := range rows {
			label := r.Status
			if label == "queued" {
				label = "retried"
			}
			e.metrics.sends.WithLabelValues(label).Inc()
		}
		total += len(rows)
		if len(rows) > 0 {
			e.log.Info("rescued expired leases", "rows", len(rows))
			signal(e.wakeRefresh)
		}
		if len(rows) < 1000 {
			return total, nil
		}
	}
}

// sweepCancelled turns the queued rows of cancelled campaigns into cancelled.
func (e *Executor) sweepCancelled(ctx context.Context) error {
	ids, err := e.q.CampaignListCancelledWithQueued(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		for {
			n, err := e.q.SendSweepCancelled(ctx, e.now(), id)
			if err != nil {
				return err
			}
			e.metrics.sends.WithLabelValues("cancelled").Add(float64(n))
			if n == 0 {
				break
			}
		}
	}
	return nil
}

// finish moves a campaign from sending to sent when nothing is queued or in flight.
func (e *Executor) finish(ctx context.Context, id int64) bool {
	_, err := e.q.CampaignFinish(ctx, e.now(), id)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false
	case err != nil:
		if ctx.Err() == nil {
			e.log.Warn("finish campaign", "campaign_id", id, "err", err)
		}
		return false
	}
	e.log.Info("campaign sent", "campaign_id", id)
	return true
}

// interval converts d for a PostgreSQL interval parameter.
func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}
