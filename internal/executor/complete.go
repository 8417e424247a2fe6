package executor

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/store"
)

// complete coalesces the workers' results into one acknowledgement statement every
// AckInterval or every AckBatch rows (DESIGN.md §4, as River's batch completer). The
// results channel is small, so a slow database pushes back on the workers instead
// of growing a backlog: blocked workers take no more jobs, so the prefetch queue
// stays full and the dispatcher claims nothing. One acknowledgement runs at a
// time; the results that come in meanwhile join the next, which grows with the
// statement's latency instead of a second statement running beside it. Two at
// once cost PostgreSQL more CPU per message, not less time: side by side with the
// claims they write the same index pages and heap pages (docs/performance.md,
// "Fewer statements at once").
func (e *Executor) complete() {
	defer e.completer.Done()
	const parallel = 1
	ackers := make(chan *acker, parallel)
	for range parallel {
		ackers <- newAcker(e)
	}
	var acking atomic.Int64 // rows in acknowledgements under way
	launch := func(a *acker, batch []result) {
		a.batch = append(a.batch[:0], batch...)
		acking.Add(int64(len(batch)))
		go func() {
			a.flush(a.batch)
			acking.Add(-int64(len(a.batch)))
			ackers <- a
		}()
	}
	defer func() {
		for range parallel {
			<-ackers // every acknowledgement under way has ended
		}
	}()
	batch := make([]result, 0, e.cfg.AckBatch)
	// A batch as large as a claim is worth a statement at once.
	full := max(1, min(e.cfg.AckBatch, e.cfg.BatchSize))
	timer := e.clk.NewTimer(time.Hour)
	timer.Stop()
	// due: the batch goes out as soon as the acker is free. While it is busy (a
	// slow commit, a durable cluster) results keep joining it, up to AckBatch, so
	// acknowledgements grow with their latency instead of holding up workers.
	due := false
	for {
		var free chan *acker
		if due {
			free = ackers
		}
		in := e.results
		if len(batch) >= e.cfg.AckBatch {
			in = nil // the batch is full to the brim: wait for an acker
		}
		select {
		case r, ok := <-in:
			if !ok {
				if len(batch) > 0 {
					launch(<-ackers, batch)
				}
				return
			}
			if len(batch) == 0 {
				timer.Reset(e.cfg.AckInterval)
			}
			batch = append(batch, r)
			// Waiting only pays while other sends may still join the batch: once every
			// claimed row not already being acknowledged has its result, it is due.
			if !due && (len(batch) >= full || int64(len(batch)) >= int64(e.outstanding())-acking.Load()) {
				due = true
				timer.Stop()
			}
		case <-timer.C:
			due = true
		case a := <-free:
			launch(a, batch)
			batch, due = batch[:0], false
		}
	}
}

// flush writes one batch of acknowledgements (tests call it directly).
func (e *Executor) flush(batch []result) { newAcker(e).flush(batch) }

// acker holds the completer's reusable statement parameters and its outcome
// counters, so a flush allocates nothing per result.
type acker struct {
	e        *Executor
	batch    []result // the results being acknowledged (complete's copy)
	p        store.SendAckManyParams
	released []claimRef
	// releasedUntil is when each released row may be claimed again (its result's
	// next: zero for at once).
	releasedUntil []time.Time
	counters      map[string]prometheus.Counter
}

func newAcker(e *Executor) *acker {
	a := &acker{e: e, counters: map[string]prometheus.Counter{}}
	for _, label := range []string{"sent", "failed", "unknown", "retried", "released"} {
		a.counters[label] = e.metrics.sends.WithLabelValues(label)
	}
	return a
}

// flush writes one batch of acknowledgements, retrying through a database outage.
// It gives up only when the shutdown deadline has passed: the rows then stay
// 'sending' and the rescuer treats them as in flight, which is what they were.
func (a *acker) flush(batch []result) {
	if len(batch) == 0 {
		return
	}
	e := a.e
	p := &a.p
	p.Now = e.clk.DB()
	p.Ids, p.Attempts, p.Statuses = p.Ids[:0], p.Attempts[:0], p.Statuses[:0]
	p.ProviderIds, p.Errors, p.RetryInUs = p.ProviderIds[:0], p.Errors[:0], p.RetryInUs[:0]
	p.Doubts = p.Doubts[:0]
	a.released, a.releasedUntil = a.released[:0], a.releasedUntil[:0]
	// A retry's time is this process's (r.next); the database gets the wait left
	// until then, which it adds to its own clock.
	now := e.clk.Now()
	for _, r := range batch {
		if r.status == statusRelease {
			a.released = append(a.released, claimRef{r.id, r.attempts})
			a.releasedUntil = append(a.releasedUntil, r.next)
			continue
		}
		p.Ids = append(p.Ids, r.id)
		p.Attempts = append(p.Attempts, r.attempts)
		p.Statuses = append(p.Statuses, r.status)
		p.ProviderIds = append(p.ProviderIds, r.providerID)
		p.Errors = append(p.Errors, r.err)
		p.RetryInUs = append(p.RetryInUs, max(r.next.Sub(now), 0).Microseconds())
		p.Doubts = append(p.Doubts, r.doubt)
	}
	acked, releasedDone := len(p.Ids) == 0, len(a.released) == 0
	backoff := newStepBackoff(50*time.Millisecond, 5*time.Second)
	for {
		back := e.live.Back()
		start := e.clk.Instant()
		ctx, cancel := context.WithTimeout(e.writeCtx, 30*time.Second)
		var err error
		if !acked {
			if _, err = e.planned(ctx, (*store.Queries).SendPlanLinear).SendAckMany(ctx, *p); err == nil {
				acked = true
				e.metrics.ackSeconds.Observe(e.clk.Since(start).Seconds())
				e.metrics.ackBatch.Observe(float64(len(p.Ids)))
			}
		}
		if err == nil && !releasedDone {
			if _, err = e.releaseUntil(ctx, a.released, a.releasedUntil); err == nil {
				releasedDone = true
			}
		}
		cancel()
		if err == nil {
			break
		}
		b := backoff.next()
		e.log.Warn("acknowledge sends; retrying", "rows", len(batch), "err", err, "backoff", b.String())
		if !e.sleepUnlessBack(e.sendCtx, back, b) {
			e.log.Error("acknowledgements abandoned at shutdown; the rescuer will settle these rows", "rows", len(batch))
			break
		}
	}
	wake := false
	for _, r := range batch {
		a.count(r.status)
		if c := r.campaign; c != nil {
			c.acks.Add(1)
			if c.unacked.Add(-1) == 0 && c.finishWait.Load() {
				wake = true
			}
		}
	}
	e.unacked.Add(-int64(len(batch)))
	if wake {
		signal(e.wakeDispatch) // a campaign waits for these acknowledgements to finish
	}
}

// count adds one outcome to sendonce_sends_total.
func (a *acker) count(status string) {
	label := status
	switch label {
	case "queued":
		label = "retried"
	case statusRelease:
		label = "released"
	}
	c := a.counters[label]
	if c == nil {
		c = a.e.metrics.sends.WithLabelValues(label)
		a.counters[label] = c
	}
	c.Inc()
}

// outstanding is the number of rows handed to the workers and not yet acknowledged.
func (e *Executor) outstanding() int { return max(0, int(e.unacked.Load())) }
