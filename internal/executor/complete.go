package executor

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/internal/store"
)

// complete coalesces the workers' results into one acknowledgement statement every
// AckInterval or every AckBatch rows (DESIGN.md §4, as River's batch completer). The
// results channel is small, so a slow database pushes back on the workers instead
// of growing a backlog; worker slots are only freed once their rows are acknowledged.
func (e *Executor) complete() {
	defer e.completer.Done()
	var batch []result
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case r, ok := <-e.results:
			if !ok {
				e.flush(batch)
				return
			}
			if len(batch) == 0 {
				timer.Reset(e.cfg.AckInterval)
			}
			batch = append(batch, r)
			// Waiting only pays while other sends may still join the batch: once every
			// claimed row has its result, flush at once so the slots come back.
			if len(batch) < e.cfg.AckBatch && len(batch) < e.outstanding() {
				continue
			}
			timer.Stop()
		case <-timer.C:
		}
		e.flush(batch)
		batch = batch[:0]
	}
}

// flush writes one batch of acknowledgements, retrying through a database outage.
// It gives up only when the shutdown deadline has passed: the rows then stay
// 'sending' and the rescuer treats them as in flight, which is what they were.
func (e *Executor) flush(batch []result) {
	if len(batch) == 0 {
		return
	}
	p := store.SendAckManyParams{Now: e.now()}
	var released []claimRef
	for _, r := range batch {
		if r.status == statusRelease {
			released = append(released, claimRef{r.id, r.attempts})
			continue
		}
		p.Ids = append(p.Ids, r.id)
		p.Attempts = append(p.Attempts, r.attempts)
		p.Statuses = append(p.Statuses, r.status)
		p.ProviderIds = append(p.ProviderIds, r.providerID)
		p.Errors = append(p.Errors, r.err)
		p.NextAttempts = append(p.NextAttempts, r.next)
	}
	acked, releasedDone := len(p.Ids) == 0, len(released) == 0
	backoff := newStepBackoff(50*time.Millisecond, 5*time.Second)
	for {
		start := time.Now()
		ctx, cancel := context.WithTimeout(e.writeCtx, 30*time.Second)
		var err error
		if !acked {
			if _, err = e.q.SendAckMany(ctx, p); err == nil {
				acked = true
				e.metrics.ackSeconds.Observe(time.Since(start).Seconds())
				e.metrics.ackBatch.Observe(float64(len(p.Ids)))
			}
		}
		if err == nil && !releasedDone {
			if _, err = e.release(ctx, released); err == nil {
				releasedDone = true
			}
		}
		cancel()
		if err == nil {
			break
		}
		b := backoff.next()
		e.log.Warn("acknowledge sends; retrying", "rows", len(batch), "err", err, "backoff", b.String())
		if !sleep(e.sendCtx, b) {
			e.log.Error("acknowledgements abandoned at shutdown; the rescuer will settle these rows", "rows", len(batch))
			break
		}
	}
	for _, r := range batch {
		label := r.status
		switch label {
		case "queued":
			label = "retried"
		case statusRelease:
			label = "released"
		}
		e.metrics.sends.WithLabelValues(label).Inc()
	}
	e.slotsFreed(len(batch))
}

// outstanding is the number of claimed rows not yet acknowledged.
func (e *Executor) outstanding() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg.Workers - e.free
}
