package event

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/internal/store"
)

// The worker's row in the executors table is a liveness.Registration (w.live),
// the same liveness the executor keeps for sends (DESIGN.md §4): the deliveries
// the worker claims carry its id, and a delivery whose worker stopped beating for
// three heartbeats is claimed again at once. The worker registers a row of its
// own: it runs beside the executor but holds its own claims, and the executor's
// sweep of dead rows (ExecutorDeleteDead) treats it like any other. A heartbeat
// loop of its own (Run) keeps the row fresh whatever the claim loop is doing (a
// long purge, a slow statement); each claim also beats first when a beat is due,
// so a claim never carries an id older than a heartbeat.

// heartbeat refreshes the worker's row every Heartbeat until ctx ends.
func (w *Worker) heartbeat(ctx context.Context) {
	for {
		w.live.BeatIfDue(ctx)
		t := w.clk.NewTimer(w.opts.Heartbeat)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// deregister removes the worker's row once its deliveries in flight have settled:
// whatever it still holds is free at once.
func (w *Worker) deregister() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.live.Deregister(ctx); err != nil {
		w.log.Warn("deregister event worker", "executor_id", w.live.ID(), "err", err)
	}
}

// releaseLost hands back the deliveries of claims whose answer was lost
// (liveness.LostClaims), once the worker holds nothing: no delivery in flight
// (a claim is never under way here, claims run on this goroutine). It reports
// whether claiming may go on; until then, every finished delivery wakes the loop.
func (w *Worker) releaseLost(ctx context.Context) (bool, error) {
	if !w.lost.Pending() {
		return true, nil
	}
	w.mu.Lock()
	busy := w.free < w.opts.Concurrency
	w.mu.Unlock()
	if busy {
		return false, nil
	}
	ids := w.live.IDs()
	if len(ids) == 0 {
		// Claims without a registration answer to their lease.
		w.lost.Released()
		return true, nil
	}
	n, err := store.New(w.pool).EventDeliveryReleaseLost(ctx, store.EventDeliveryReleaseLostParams{
		Now: w.live.SQLNow(), ExecutorIds: ids, LeaseFromInUs: w.lost.LeaseFromIn(lease, w.clk.Now()).Microseconds()})
	if err != nil {
		return false, err
	}
	w.lost.Released()
	w.log.Info("released the deliveries of claims whose answer was lost", "deliveries", n, "executor_ids", ids)
	return true, nil
}
