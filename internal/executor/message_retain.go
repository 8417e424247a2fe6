package executor

import (
	"context"
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
	start := time.Now()
	var total int64
	defer func() {
		if total > 0 {
			e.metrics.retiredRows.Add(float64(total))
			e.log.Info("deleted messages past retention", "messages", total, "retention", e.cfg.MessageRetention.String())
		}
	}()
	for {
		n, err := e.q.MessageDeleteRetired(ctx, cutoff, e.retainBatch)
		if err != nil {
			return total, err
		}
		total += n
		if n < int64(e.retainBatch) {
			e.retainMessagesAfter = e.clock().Add(retentionEvery)
			return total, nil
		}
		if time.Since(start) >= retentionBudget {
			return total, nil // more to do: the next pass continues
		}
	}
}
