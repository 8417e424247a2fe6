package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
)

// job is one claimed recipient handed to a worker.
type job struct {
	campaign *campaign
	// route is what the claim recorded on the row: the row is sent through it and
	// its outcome reported to its sender. Nil (jobs built by hand in tests): the
	// campaign's current route.
	route *route
	row   store.SendClaimBatchRow
	// leaseEnd is when the lease ends on this process's clock (claim start +
	// Lease); zero means row.LeaseUntil, the database's.
	leaseEnd time.Time
	// message is the claimed transactional message when campaign is a message
	// stream; Config.Transactional builds it.
	message *store.MessageClaimBatchRow
	// event is a sequence step's event data (Config.SequenceData): {{.Event}}.
	event []byte
}

// claimRef names one claim of a row: the row and the attempts the claim set.
type claimRef struct {
	id       int64
	attempts int32
}

// result is a worker's verdict on one job, for the completer.
type result struct {
	id         int64
	attempts   int32  // the claim's attempts: the fence that keeps this ack on its own claim
	status     string // sent, queued, failed, unknown, or statusRelease
	providerID string
	err        string
	next       time.Time
	// doubt: a retry of an answer that leaves delivery open (ambiguous); the row
	// may be replayed only through the route it was sent through.
	doubt bool
	// campaign is the job's, whose unacked count the acknowledgement lowers (nil
	// for results built by hand in tests).
	campaign *campaign
}

// work sends jobs until the dispatcher closes the channels, a waiting message
// before any campaign row. Once claiming has stopped (shutdown), jobs not yet
// started are set aside to be released.
func (e *Executor) work() {
	defer e.workers.Done()
	// The worker's campaign messages are rendered into bufs, reused from one to
	// the next: the provider reads them until Send returns (render.BuildInto).
	var bufs render.Buffers
	for {
		j, ok := e.nextJob()
		if !ok {
			return
		}
		e.jobTaken()
		if e.stopping() {
			e.mu.Lock()
			e.released = append(e.released, claimRef{j.row.ID, j.row.Attempts})
			e.mu.Unlock()
			e.jobDone()
			continue
		}
		res := e.sendWith(e.sendCtx, j, &bufs)
		bufs.Trim()
		res.campaign = j.campaign
		e.results <- res
		e.jobDone()
	}
}

// jobTaken records that a worker took a job off the prefetch queue: room for the
// next claim. The worker counts as busy before the room shows, so the dispatcher
// never sees a free worker and the row it took both.
func (e *Executor) jobTaken() {
	e.busy.Add(1)
	e.slotsFreed(1)
}

// jobDone records that a worker is free for the next job (its result is with the
// completer), waking the dispatcher if a shallow claim waits for one.
func (e *Executor) jobDone() {
	e.busy.Add(-1)
	if e.idleWait.Load() && e.idleWait.CompareAndSwap(true, false) {
		signal(e.wakeDispatch)
	}
}

// nextJob takes the next message if one waits, else whichever job comes first. It
// reports false once both channels are closed and drained.
func (e *Executor) nextJob() (job, bool) {
	select {
	case j, ok := <-e.messageJobs:
		if ok {
			return j, true
		}
		j, ok = <-e.jobs // shutdown: the campaign rows left
		return j, ok
	default:
	}
	select {
	case j, ok := <-e.messageJobs:
		if ok {
			return j, true
		}
		j, ok = <-e.jobs
		return j, ok
	case j, ok := <-e.jobs:
		if ok {
			return j, true
		}
		j, ok = <-e.messageJobs
		return j, ok
	}
}

func (e *Executor) stopping() bool {
	select {
	case <-e.sendCtx.Done():
		return true
	default:
	}
	return e.claimsStopped()
}

// send renders, builds and sends one message and classifies the outcome.
func (e *Executor) send(ctx context.Context, j job) result {
	return e.sendWith(ctx, j, new(render.Buffers))
}

// sendWith is send rendering a campaign message into bufs, whose bytes the
// message borrows until the provider's Send returns; nothing of it is kept after.
func (e *Executor) sendWith(ctx context.Context, j job, bufs *render.Buffers) result {
	r := j.row
	// The lease began at claim; the worker may start much later (waiting for a
	// slot, an SMTP connection). A send that could outlive the lease may race a
	// rescue and a second claim, so it starts only while more than sendMargin of
	// the lease is left, and its context ends there. Otherwise the row goes back
	// to the queue uncharged, without the provider ever seeing it.
	deadline := e.sendDeadline(j)
	left := deadline.Sub(e.clk.Now())
	if left <= 0 || !e.sendable(claimant(r)) {
		// Too little lease, or this process's heartbeat is too old (or it was
		// declared dead): a rescuer may take the row at any moment, so the provider
		// must not see it from here.
		return result{id: r.ID, attempts: r.Attempts, status: statusRelease}
	}
	err := e.sequenceEvent(ctx, &j, deadline)
	var msg provider.Message
	if err == nil {
		msg, err = e.buildWith(j, bufs)
	}
	if pe, ok := provider.AsError(err); ok && pe.Class == provider.Temporary {
		// What the message carries could not be read (its attachments): nothing
		// was sent; retry later like a provider's temporary refusal.
		status, next := "queued", e.clk.Now().Add(e.retry.jittered(int(r.Attempts)))
		if int(r.Attempts) >= e.cfg.MaxAttempts {
			status = "failed"
		}
		return result{id: r.ID, attempts: r.Attempts, status: status, err: err.Error(), next: next}
	}
	if err != nil {
		// A template that cannot render for this recipient will never render.
		return result{id: r.ID, attempts: r.Attempts, status: "failed", err: err.Error()}
	}
	rt := j.route
	if rt == nil {
		rt = e.routeOf(j.campaign)
	}
	adm, held := e.paced(ctx, j, rt, left)
	if held != nil {
		return *held
	}
	left = deadline.Sub(e.clk.Now())
	sctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	start := e.clk.Instant()
	pid, err := rt.provider.Send(sctx, msg)
	e.pace.done(rt, r.Email, adm, err, e.clk.Now())
	e.report(rt, r.AccountID, r.Email, err)
	e.metrics.providerSeconds.Observe(e.clk.Since(start).Seconds())
	if rt.pool != nil {
		e.metrics.poolSends.WithLabelValues(rt.positionLabel(), outcomeLabel(err)).Inc()
	}
	if err == nil {
		return result{id: r.ID, attempts: r.Attempts, status: "sent", providerID: pid}
	}
	if sctx.Err() == nil && e.failover(rt, err) {
		// The pool's sender refused before taking anything (and not because our
		// own deadline cut the call): the row goes back, uncharged, to be claimed
		// through the pool's next sender (pool.go).
		return result{id: r.ID, attempts: r.Attempts, status: statusRelease}
	}
	if ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) &&
		errors.Is(err, context.DeadlineExceeded) && provider.ClassOf(err) == provider.Temporary {
		// The lease ran short before the handover (e.g. waiting for an SMTP
		// connection): the provider has not seen the message.
		return result{id: r.ID, attempts: r.Attempts, status: statusRelease}
	}
	res := result{id: r.ID, attempts: r.Attempts, err: err.Error(), next: e.clk.Now()}
	exhausted := int(r.Attempts) >= e.cfg.MaxAttempts
	switch provider.ClassOf(err) {
	case provider.Permanent:
		res.status = "failed"
	case provider.Temporary:
		res.status, res.next = "queued", e.clk.Now().Add(e.retry.jittered(int(r.Attempts)))
		if rest := e.pace.restUntil(rt, r.Email); rest.After(res.next) {
			// Its domain deferred: it waits with the group's other rows.
			res.next = rest
		}
		pe, _ := provider.AsError(err)
		if pe != nil && pe.RetryAfter > 0 && e.clk.Now().Add(pe.RetryAfter).After(res.next) {
			// The provider said when (a rate limit or quota): no sooner.
			res.next = e.clk.Now().Add(pe.RetryAfter)
		}
		if pe != nil && pe.Config && j.message != nil {
			// The sender's credentials or setup failed, not this message: it waits
			// for the sender to be fixed (its stream is held once the sender is
			// paused), as a campaign's recipients do, but at most MessageHoldMax.
			exhausted = false
			if waited := e.clk.Now().Sub(j.message.DueAt); waited >= e.cfg.MessageHoldMax {
				res.status = "failed"
				res.err = fmt.Sprintf("held longer than %s while its sender fails: %s", e.cfg.MessageHoldMax, res.err)
			}
		}
	default: // Ambiguous: the message may have been accepted.
		switch {
		case rt.idempotent || j.campaign.AmbiguousPolicy == "retry":
			// A replay with the same job id (and Message-ID) is dropped downstream,
			// or the campaign accepted the risk of a copy; only through this route.
			res.status, res.next = "queued", e.clk.Now().Add(e.retry.jittered(int(r.Attempts)))
			res.doubt = true
		default:
			res.status = "unknown"
			exhausted = false
		}
	}
	if res.status == "queued" && ctx.Err() != nil {
		// Our shutdown deadline cut the call, not the provider: no backoff, and this
		// attempt cannot be the one that fails the row.
		res.next, exhausted = e.clk.Now(), false
	}
	if res.status == "queued" && exhausted {
		res.status = "failed"
		res.err = fmt.Sprintf("attempts exhausted (%d): %s", r.Attempts, res.err)
	}
	return res
}

// statusRelease marks a result whose row was never handed to the provider: the
// completer releases it (queued, attempt uncharged) instead of acknowledging it.
const statusRelease = "release"

// sendDeadline is when a send of j must have ended: sendMargin before its lease
// ends. The dispatcher dates the lease on this process's (monotonic) clock, which
// a skewed database clock cannot stretch; jobs built by hand (tests) use the
// row's lease_until, or a full lease when there is none.
func (e *Executor) sendDeadline(j job) time.Time {
	until := j.leaseEnd
	switch {
	case !until.IsZero():
	case j.row.LeaseUntil != nil:
		until = *j.row.LeaseUntil
	default:
		until = e.clk.Now().Add(e.cfg.Lease)
	}
	return until.Add(-e.sendMargin())
}

// sendMargin is the part of a lease a send may not start in: a third, so a send
// started just before has a third of the lease (at least one provider timeout,
// which configuration enforces) to end before a rescuer may take the row back.
func (e *Executor) sendMargin() time.Duration { return e.cfg.Lease / 3 }

// claimant is the executor a claimed row was stamped with; 0 for none.
func claimant(r store.SendClaimBatchRow) int64 {
	if r.ExecutorID == nil {
		return 0
	}
	return *r.ExecutorID
}

// sequenceEvent reads a sequence step send's event data into j when the step's
// templates use .Event, within the send's deadline. A failed read sent nothing:
// it is a temporary error, retried like a provider's temporary refusal.
func (e *Executor) sequenceEvent(ctx context.Context, j *job, deadline time.Time) error {
	c := j.campaign
	if e.cfg.SequenceData == nil || j.message != nil || c == nil || c.tmpl == nil || !c.tmpl.UsesEvent() ||
		!strings.HasPrefix(j.row.JobID, "sequence:") {
		return nil
	}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	data, err := e.cfg.SequenceData(dctx, j.row.AccountID, j.row.JobID)
	if err != nil {
		return &provider.Error{Class: provider.Temporary, Err: fmt.Errorf("read the step's event data: %w", err)}
	}
	j.event = data
	return nil
}

// build renders the campaign for the recipient and assembles the provider message
// (keyed Message-ID, List-Unsubscribe headers) with internal/render.
func (e *Executor) build(j job) (provider.Message, error) {
	return e.buildWith(j, nil)
}

// buildWith is build rendering a campaign message into bufs (render.BuildInto:
// valid until bufs is used again); with nil bufs, into strings of its own.
func (e *Executor) buildWith(j job, bufs *render.Buffers) (provider.Message, error) {
	if j.message != nil {
		m, err := e.cfg.Transactional.BuildMessage(*j.message)
		m.SendID = j.row.ID // a message's Return-Path names its send row as a campaign's does
		return m, err
	}
	c, r := j.campaign, j.row
	tmpl, err := c.templateOf(r)
	if err != nil {
		return provider.Message{}, err
	}
	httpsURL, mailto := e.cfg.Links(r.AccountID, c.ID, r.SubscriberID)
	links := render.Links{HTTPS: httpsURL, Mailto: mailto}
	if e.cfg.Tracking != nil {
		links.Click, links.Open, links.WebView = e.cfg.Tracking(r.AccountID, c.ID, r.ID, tmpl.NumLinks(),
			c.TrackClicks, c.TrackOpens)
	}
	rc := render.Recipient{JobID: r.JobID, Email: r.Email, Name: r.Name, Attributes: r.Attributes, Event: j.event}
	var m provider.Message
	if bufs != nil {
		m, err = tmpl.BuildInto(bufs, rc, links)
	} else {
		m, err = tmpl.Build(rc, links)
	}
	m.Attachments = e.encoded.Attach(c.ID, c.files)
	m.SendID = r.ID // a sender with a bounce domain names the row in its Return-Path
	return m, err
}
