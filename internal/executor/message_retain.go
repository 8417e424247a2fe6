package executor

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/internal/store"
)

// retainMessages deletes the settled transactional messages (and their send rows)
// accepted longer ago than MessageRetention, retentionBatch at a time
// (MessageDeleteRetired), for at most retentionBudget per maintenance pass. When a
// pass finds nothing more to delete, the next looks again after retentionEvery.
// It returns the messages deleted.
func (e *Executor) retainMessages(ctx context.Context) (int64, error) {
	if e.cfg.MessageRetention <= 0 || e.clk.Now().Before(e.retainMessagesAfter) {
		return 0, nil
	}
	cutoff := e.clk.Now().Add(-e.cfg.MessageRetention)
	n, done, err := e.deleteInBatches(e.clk.Instant(), func() (int64, error) {
		return e.q.MessageDeleteRetired(ctx, store.MessageDeleteRetiredParams{Cutoff: cutoff, N: e.retainBatch})
	})
	if n > 0 {
		e.metrics.retiredRows.Add(float64(n))
		e.log.Info("deleted messages past retention", "messages", n, "retention", e.cfg.MessageRetention.String())
	}
	if err == nil && done {
		e.retainMessagesAfter = e.clk.Now().Add(retentionEvery)
	}
	return n, err // not done: more to do, the next pass continues
}

// attachmentGrace is how long a stored file nothing references is kept: a
// request storing a file bumps its last_used_at in the transaction that adds the
// reference, so a file younger than this is never swept from under it.
const attachmentGrace = time.Hour

// sweepAttachments deletes the stored files that no message or campaign
// references any more (their messages deleted by retention, their campaigns
// deleted or their files replaced), retentionBatch at a time, every
// retentionEvery. It returns the files deleted.
func (e *Executor) sweepAttachments(ctx context.Context) (int64, error) {
	if e.clk.Now().Before(e.sweepAttachmentsAfter) {
		return 0, nil
	}
	cutoff := e.clk.Now().Add(-attachmentGrace)
	n, done, err := e.deleteInBatches(e.clk.Instant(), func() (int64, error) {
		return e.q.AttachmentBlobDeleteUnreferenced(ctx, store.AttachmentBlobDeleteUnreferencedParams{Cutoff: cutoff, N: min(e.retainBatch, 100)})
	})
	if n > 0 {
		e.log.Info("deleted unreferenced attachments", "files", n)
	}
	if err == nil && done {
		e.sweepAttachmentsAfter = e.clk.Now().Add(retentionEvery)
	}
	return n, err
}
