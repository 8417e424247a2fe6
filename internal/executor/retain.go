package executor

import (
	"context"
	"github.com/sendonce/sendonce/internal/clock"
	"github.com/sendonce/sendonce/internal/store"
	"time"
)

// retentionBatch is how many rows one retention statement deletes, and
// retentionBudget how long one maintenance pass keeps deleting: old history goes
// in small transactions that never hold many row locks or stall maintenance.
const (
	retentionBatch  = 5000
	retentionBudget = time.Second
)

// retentionEvery is how often a pass looks for campaigns past retention when the
// last pass finished its work.
const retentionEvery = time.Minute

// retain deletes the settled send rows of campaigns finished longer ago than
// SendRetention, each statement moving its rows into the campaign's archived
// counts (SendDeleteRetired). It returns the rows deleted. A pass stops after
// retentionBudget and the next maintenance pass goes on; when it found nothing
// more to do, the next pass waits retentionEvery.
func (e *Executor) retain(ctx context.Context) (int64, error) {
	if e.cfg.SendRetention <= 0 || e.clk.Now().Before(e.retainAfter) {
		return 0, nil
	}
	ids, err := e.q.CampaignListRetired(ctx, store.CampaignListRetiredParams{Now: e.clk.DB(), Retention: interval(e.cfg.SendRetention)})
	if err != nil {
		return 0, err
	}
	start := e.clk.Instant()
	var total int64
	defer func() {
		if total > 0 {
			e.metrics.retiredRows.Add(float64(total))
			e.log.Info("deleted send rows past retention", "rows", total, "retention", e.cfg.SendRetention.String())
		}
	}()
	for _, id := range ids {
		n, done, err := e.deleteInBatches(start, func() (int64, error) {
			return e.q.SendDeleteRetired(ctx, store.SendDeleteRetiredParams{CampaignID: id, N: e.retainBatch})
		})
		total += n
		if err != nil || !done {
			return total, err // out of budget: the next pass continues
		}
	}
	if len(ids) < 100 {
		e.retainAfter = e.clk.Now().Add(retentionEvery)
	}
	return total, nil
}

// deleteInBatches runs del (one retention statement of at most retainBatch rows)
// until it deletes less than a batch (done) or the pass has run retentionBudget
// since start, and returns the rows deleted.
func (e *Executor) deleteInBatches(start clock.Instant, del func() (int64, error)) (total int64, done bool, err error) {
	for {
		n, err := del()
		if err != nil {
			return total, false, err
		}
		total += n
		if n < int64(e.retainBatch) {
			return total, true, nil
		}
		if e.clk.Since(start) >= retentionBudget {
			return total, false, nil
		}
	}
}
