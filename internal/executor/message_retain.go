package executor

import (
	"context"
	"github.com/sendonce/sendonce/internal/store"
	"time"
)

// retainMessages deletes the settled transactional messages (and their send rows)
// accepted longer ago than MessageRetention, retentionBatch at a time
// (MessageDeleteRetired), for at most retentionBudget per maintenance pass. When a
// pass finds nothing more to delete, the next looks again after retentionEvery.
// It returns the messages deleted.
func (e *Executor) retainMessages(ctx context.Context) (int64, error) {
	if e.cfg.MessageRetention <= 0 || e.clock().Before(e.retainMessagesAfter) {
		return 0, nil
	}
	cutoff := e.clock().Add(-e.cfg.MessageRetention)
	n, done, err := e.deleteInBatches(time.Now(), func() (int64, error) {
		return e.q.MessageDeleteRetired(ctx, store.MessageDeleteRetiredParams{Cutoff: cutoff, N: e.retainBatch})
	})
	if n > 0 {
		e.metrics.retiredRows.Add(float64(n))
		e.log.Info("deleted messages past retention", "messages", n, "retention", e.cfg.MessageRetention.String())
	}
	if err == nil && done {
		e.retainMessagesAfter = e.clock().Add(retentionEvery)
	}
	return n, err // not done: more to do, the next pass continues
}
