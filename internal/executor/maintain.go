package executor

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	campaignsvc "github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/store"
)

// maintain runs the rescuer, the cancel, fail and archive sweeps, the finalizer and the queued gauge
// every Maintenance interval. Every replica runs it; each step is a SKIP LOCKED or
// compare-and-set statement, so they do not collide.
func (e *Executor) maintain(ctx context.Context) {
	defer e.loops.Done()
	for {
		if err := e.maintainOnce(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("maintenance", "err", err)
		}
		if !e.clk.Sleep(ctx, e.cfg.Maintenance) {
			return
		}
	}
}

func (e *Executor) maintainOnce(ctx context.Context) error {
	if _, err := e.rescue(ctx); err != nil {
		return err
	}
	if e.mayJudgeLiveness() {
		// Their rows were rescued above; a dead executor's row has no use left.
		if _, err := e.q.ExecutorDeleteDead(ctx, store.ExecutorDeleteDeadParams{Now: e.clk.DB(), DeadAfter: interval(e.deadAfter())}); err != nil {
			return err
		}
	}
	if err := e.sweepCancelled(ctx); err != nil {
		return err
	}
	if err := e.sweepFailed(ctx); err != nil {
		return err
	}
	// An archive's running enrollments end in batches after it commits; what a
	// cut-short archive left ends here.
	if n, err := sequence.ExitArchivedLeftovers(ctx, e.q, e.clk.DB()); err != nil {
		return err
	} else if n > 0 {
		e.log.Info("ended the running enrollments an archive left", "enrollments", n)
	}
	campaigns, err := e.q.CampaignListSending(ctx)
	if err != nil {
		return err
	}
	e.metrics.activeCampaigns.Set(float64(len(campaigns)))
	for _, c := range campaigns {
		if c.Kind != kindMessages { // a message stream never finishes
			e.finish(ctx, c.ID)
		}
	}
	if err := e.failHeld(ctx); err != nil {
		return err
	}
	if err := e.countQueued(ctx); err != nil {
		return err
	}
	if _, err = e.retain(ctx); err != nil {
		return err
	}
	if _, err = e.retainMessages(ctx); err != nil {
		return err
	}
	if _, err = e.retainSequences(ctx); err != nil {
		return err
	}
	if _, err = e.retainAudit(ctx); err != nil {
		return err
	}
	_, err = e.sweepAttachments(ctx)
	return err
}

// queuedEvery is how often the queued-rows gauge is recounted. The count reads
// every queued row's index entry, and during a send most of their heap pages too
// (churn keeps them off the visibility map): work that grows with the audience,
// which every 5 s took a share of the CPU from a large campaign's send.
const queuedEvery = time.Minute

// countQueued refreshes sendonce_queued_rows when its last count is queuedEvery old.
func (e *Executor) countQueued(ctx context.Context) error {
	if e.clk.Now().Before(e.queuedAfter) {
		return nil
	}
	n, err := e.onIndexPaths(ctx).SendCountQueued(ctx)
	if err != nil {
		return err
	}
	e.metrics.queuedRows.Set(float64(n))
	e.queuedAfter = e.clk.Now().Add(queuedEvery)
	return nil
}

// rescue settles rows in flight whose holder is gone: their lease expired, or
// (once this process may judge liveness) the executor holding them stopped its
// heartbeat. It returns how many rows it moved.
func (e *Executor) rescue(ctx context.Context) (int, error) {
	total := 0
	self := e.live.ID()
	p := store.SendRescueExpiredParams{
		MaxAttempts:   int32(e.cfg.MaxAttempts),
		Now:           e.clk.DB(),
		ExpiryDelays:  e.retry.expiryTable(e.cfg.MaxAttempts),
		CheckLiveness: e.mayJudgeLiveness(),
		DeadAfter:     interval(e.deadAfter()),
		UnownedGrace:  interval(e.cfg.StartupGrace),
	}
	if self != 0 {
		p.Self = &self
	}
	for {
		rows, err := e.planned(ctx, (*store.Queries).SendPlanLinear).SendRescueExpired(ctx, p)
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
			e.log.Info("rescued rows in flight of a stopped or expired claim", "rows", len(rows))
			signal(e.wakeRefresh)
		}
		if len(rows) < 1000 {
			return total, nil
		}
	}
}

// failHeld fails the messages that waited longer than MessageHoldMax for their
// paused sender (MessageFailHeld).
func (e *Executor) failHeld(ctx context.Context) error {
	if e.cfg.Transactional == nil {
		return nil // this process sends no messages
	}
	for {
		ids, err := e.q.MessageFailHeld(ctx, store.MessageFailHeldParams{Now: e.clk.DB(), HoldMax: interval(e.cfg.MessageHoldMax)})
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			e.metrics.sends.WithLabelValues("failed").Add(float64(len(ids)))
			e.log.Warn("messages failed: their sender stayed paused too long", "messages", len(ids),
				"hold_max", e.cfg.MessageHoldMax.String())
		}
		if len(ids) < 1000 {
			return nil
		}
	}
}

// sweepFailed deletes the rows of failed campaigns that their build's failure left
// (its process was killed between batches), in the failure's own bounded batches.
func (e *Executor) sweepFailed(ctx context.Context) error {
	campaigns, err := e.onIndexPaths(ctx).CampaignListFailedWithQueued(ctx)
	if err != nil {
		return err
	}
	for _, c := range campaigns {
		if _, err := campaignsvc.DeleteFailed(ctx, e.q, c.AccountID, c.ID); err != nil {
			return err
		}
	}
	return nil
}

// sweepCancelled closes the queued rows of cancelled campaigns that the cancel
// request left (it was cut short) or that came back to queued after it (a row in
// flight at the cancel), in the cancel's own bounded batches.
func (e *Executor) sweepCancelled(ctx context.Context) error {
	campaigns, err := e.onIndexPaths(ctx).CampaignListCancelledWithQueued(ctx)
	if err != nil {
		return err
	}
	for _, c := range campaigns {
		n, err := campaignsvc.CloseCancelled(ctx, e.q, c.AccountID, c.ID, e.clk.DB())
		e.metrics.sends.WithLabelValues("cancelled").Add(float64(n))
		if err != nil {
			return err
		}
	}
	return nil
}

// finish moves a campaign from sending to sent when nothing is queued or in flight.
// The campaign is locked first and checked by a second statement, whose fresh
// snapshot sees every row a concurrent ack, release or rescue requeued
// (CampaignLockSending).
func (e *Executor) finish(ctx context.Context, id int64) bool {
	err := postgres.InTx(ctx, e.pool, func(tx pgx.Tx) error {
		q := e.q.WithTx(tx)
		if _, err := q.CampaignLockSending(ctx, id); err != nil {
			return err
		}
		if err := q.SendPlanIndexed(ctx); err != nil { // local to this transaction
			return err
		}
		_, err := q.CampaignFinish(ctx, store.CampaignFinishParams{Now: e.clk.DB(), CampaignID: id})
		return err
	})
	switch {
	case postgres.NoRows(err):
		return false
	case err != nil:
		if ctx.Err() == nil {
			e.log.Warn("finish campaign", "campaign_id", id, "err", err)
		}
		return false
	}
	e.log.Info("campaign sent", "campaign_id", id)
	e.encoded.Forget(id)
	e.signals.finished.Signal(id)
	return true
}

// interval converts d for a PostgreSQL interval parameter.
func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}
