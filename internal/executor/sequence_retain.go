package executor

import (
	"context"

	"github.com/sendonce/sendonce/internal/store"
)

// retainSequences deletes what SequenceRetention lets go: for enrollments that
// ended before the cutoff, their settled step sends (with their event data) and
// their step log lines; and the tracked events posted before it — retentionBatch
// at a time, for at most retentionBudget per maintenance pass in all. When a pass
// finds nothing more to delete, the next looks again after retentionEvery. It
// returns the rows deleted.
func (e *Executor) retainSequences(ctx context.Context) (int64, error) {
	if e.cfg.SequenceRetention <= 0 || e.clk.Now().Before(e.retainSequencesAfter) {
		return 0, nil
	}
	cutoff := e.clk.Now().Add(-e.cfg.SequenceRetention)
	start := e.clk.Instant()
	var total int64
	for _, del := range []func() (int64, error){
		func() (int64, error) {
			return e.q.SequenceSendsDeleteRetired(ctx, store.SequenceSendsDeleteRetiredParams{Cutoff: cutoff, N: e.retainBatch})
		},
		func() (int64, error) {
			return e.q.SequenceLogDeleteRetired(ctx, store.SequenceLogDeleteRetiredParams{Cutoff: cutoff, N: e.retainBatch})
		},
		func() (int64, error) {
			return e.q.TrackEventsDeleteRetired(ctx, store.TrackEventsDeleteRetiredParams{Cutoff: cutoff, N: e.retainBatch})
		},
	} {
		n, done, err := e.deleteInBatches(start, del)
		total += n
		if err != nil || !done {
			e.logRetainedSequences(total)
			return total, err // not done: more to do, the next pass continues
		}
	}
	e.logRetainedSequences(total)
	e.retainSequencesAfter = e.clk.Now().Add(retentionEvery)
	return total, nil
}

func (e *Executor) logRetainedSequences(n int64) {
	if n > 0 {
		e.metrics.retiredRows.Add(float64(n))
		e.log.Info("deleted sequence rows past retention", "rows", n, "retention", e.cfg.SequenceRetention.String())
	}
}
