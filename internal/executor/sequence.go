package executor

import "context"

// SequenceAdvancer moves the accounts' sequence enrollments along (internal/sequence):
// it queues due steps' send rows in their step campaigns (kind 'sequence'), which
// the dispatcher then claims like any campaign's rows. Tick reports how many
// enrollments it advanced.
type SequenceAdvancer interface {
	Tick(ctx context.Context) (int, error)
}

// advanceSequences ticks the advancer every Poll; a tick that found work is
// followed by another at once (the advancer itself loops while batches come back
// full). Waiting enrollments are rows with a due time, so a restart loses nothing.
func (e *Executor) advanceSequences(ctx context.Context) {
	defer e.loops.Done()
	for {
		n, err := e.cfg.Sequences.Tick(ctx)
		if err != nil && ctx.Err() == nil {
			e.log.Warn("advance sequences", "err", err)
		}
		if n > 0 {
			signal(e.wakeRefresh) // step campaigns may have new rows
		}
		if !e.clk.Sleep(ctx, e.cfg.Poll) {
			return
		}
	}
}
