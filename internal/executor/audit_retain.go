package executor

import (
	"context"

	"github.com/sendonce/sendonce/internal/store"
)

// retainAudit deletes the audit log entries older than AuditRetention,
// retentionBatch at a time (AuditDeleteRetired), for at most retentionBudget per
// maintenance pass; once a pass finds nothing more, the next looks again after
// retentionEvery. It returns the entries deleted.
func (e *Executor) retainAudit(ctx context.Context) (int64, error) {
	if e.cfg.AuditRetention <= 0 || e.clk.Now().Before(e.retainAuditAfter) {
		return 0, nil
	}
	cutoff := e.clk.Now().Add(-e.cfg.AuditRetention)
	n, done, err := e.deleteInBatches(e.clk.Instant(), func() (int64, error) {
		return e.q.AuditDeleteRetired(ctx, store.AuditDeleteRetiredParams{Cutoff: cutoff, N: e.retainBatch})
	})
	if n > 0 {
		e.log.Info("deleted audit entries past retention", "entries", n, "retention", e.cfg.AuditRetention.String())
	}
	if err == nil && done {
		e.retainAuditAfter = e.clk.Now().Add(retentionEvery)
	}
	return n, err
}
