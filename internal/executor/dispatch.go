package executor

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"golang.org/x/time/rate"

	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/clock"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/sendwindow"
	"github.com/sendonce/sendonce/internal/store"
)

// campaign is what the dispatcher and workers know of one campaign being sent.
type campaign struct {
	store.CampaignListSendingRow
	tmpl    *render.Prepared
	tmplErr error // a template that does not parse fails every recipient permanently
	// variants are an A/B campaign's parsed variants by idx (nil: not an A/B
	// campaign); each row is rendered with the variant recorded on it.
	variants map[int16]variant
	// files are the campaign's attachments, loaded with its templates and shared
	// by every recipient's message (providers do not modify them).
	files []provider.Attachment
	// idleUntil: the last claim came back empty; ask again after this (dispatcher only).
	idleUntil clock.Instant
	// after is the claim cursor: the highest id the last full claim took (0: from
	// the start). Dispatcher only.
	after int64
	// claiming: a claim of it is under way (dispatcher only). A campaign has one
	// claim at a time: a second would start from the same cursor, walk over the
	// rows the first one holds, and write the same pages beside it.
	claiming bool
	// rt is the route its next claims send through (its sender's, else the
	// executor's), published by the dispatcher and read by claims off its goroutine.
	// senderLimiter is its sender's rate (shared by the sender's campaigns);
	// routeErr keeps it out of the deal while its sender cannot be built. Both are
	// the dispatcher's only.
	rt            atomic.Pointer[route]
	senderLimiter *rate.Limiter
	routeErr      error
	// window is its sending window bound to its zone (nil: any time), and
	// windowOpens when it opens next while shut: until then the dealer passes it
	// over on a comparison, asking PostgreSQL nothing. Dispatcher only.
	window      *sendwindow.Schedule
	windowOpens time.Time
	// wake says when a message stream is claimed (stream.go); campaigns ignore it.
	wake streamWake
	// unacked counts its rows handed to workers and not yet acknowledged. A claim
	// that finds nothing while some are (claims run ahead of acknowledgements)
	// cannot finish the campaign; finishWait then asks for another claim, and so
	// the finish check, as soon as the last of them is acknowledged, rather than
	// after Poll.
	unacked    atomic.Int64
	finishWait atomic.Bool
	// acks counts its acknowledgements written (bumped after each one commits). A
	// finish check that failed while one committed may have missed it even though
	// unacked reads 0 by now; a changed count asks for another claim, so the
	// campaign does not wait for the next tick to finish.
	acks atomic.Int64
}

// account groups one tenant's campaigns for round-robin dealing.
type account struct {
	id        int64
	campaigns []*campaign
	next      int // the campaign to serve next
	limiter   *rate.Limiter
}

// dealer is the dispatcher's state; only the dispatch goroutine touches it.
type dealer struct {
	accounts   []*account
	next       int // the account to serve next
	nextStream int // the account whose message stream to serve next
	byID       map[int64]*campaign
	limiters   map[int64]*rate.Limiter
	// senderLimiters are the per-sender rate limiters, by sender id.
	senderLimiters map[int64]*rate.Limiter
	global         *rate.Limiter
	refreshed      clock.Instant
	// inflight claims run on their own goroutines and report on done.
	inflight int
	done     chan claimDone
}

// claimDone is one claim statement's outcome, back on the dispatch goroutine.
type claimDone struct {
	a         *account
	c         *campaign
	n         int       // rows asked for, whose slots were reserved
	claimedAt time.Time // before the statement: the lease began no earlier
	rt        *route    // what the claim recorded on its rows: the workers send through it
	rows      []store.SendClaimBatchRow
	err       error
}

// dispatch keeps the prefetch queue filled with claims of whole batches, dealing
// campaigns round-robin per account so one tenant's huge campaign cannot starve
// another's small one: the queue is first in, first out, and holds two batches, so
// another account's batch waits behind at most one of this account's.
func (e *Executor) dispatch(ctx context.Context) {
	defer e.dispatcher.Done()
	d := e.newDealer()
	backoff := newStepBackoff(100*time.Millisecond, 10*time.Second)
	// Claims still running at shutdown hand their rows out (the workers set them
	// aside for release), so none stays leased with nobody knowing of it.
	defer e.drainClaims(ctx, d)
	for ctx.Err() == nil {
		back := e.live.Back()
		wait, err := e.deal(ctx, d)
		if err == nil && wait > 0 {
			err = e.await(ctx, d, wait)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			b := backoff.next()
			e.log.Warn("dispatch", "err", err, "backoff", b.String())
			if !e.sleepUnlessBack(ctx, back, b) {
				return
			}
			continue
		}
		backoff.reset()
	}
}

// await waits up to wait for a reason to deal again: freed slots, a change of
// campaigns, or a claim's result, which it takes in.
func (e *Executor) await(ctx context.Context, d *dealer, wait time.Duration) error {
	t := e.clk.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-e.wakeDispatch:
	case <-e.wakeRefresh:
		d.refreshed = clock.Instant{}
	case r := <-d.done:
		return e.claimed(ctx, d, r)
	case <-t.C:
	}
	return nil
}

// maxInflight is how many claim statements the dispatcher runs at once: two, of
// two campaigns (a campaign has one at a time: campaign.claiming), so one
// campaign's claim does not wait for another's, when no rate limit applies; one
// under a rate limit, whose budget is charged with what each claim actually took.
func (e *Executor) maxInflight() int {
	if e.cfg.RatePerSecond > 0 || e.cfg.AccountRatePerSecond > 0 {
		return 1
	}
	return 2
}

// launch reserves n slots and runs a claim of c on its own goroutine.
func (e *Executor) launch(ctx context.Context, d *dealer, a *account, c *campaign, n int) {
	e.free.Add(int64(-n))
	d.inflight++
	c.claiming = true
	after := c.after
	r := claimDone{a: a, c: c, n: n, claimedAt: e.clk.Now(), rt: e.routeOf(c)}
	go func() {
		r.rows, r.err = e.claimFrom(ctx, c, r.rt, n, after)
		d.done <- r
	}()
}

// claimed takes in a claim's result on the dispatch goroutine: the cursor, the
// rows to the workers, the unused slots back, an empty campaign marked idle.
func (e *Executor) claimed(ctx context.Context, d *dealer, r claimDone) error {
	d.inflight--
	r.c.claiming = false
	e.free.Add(int64(r.n)) // handOut takes back what is really sent
	if r.err != nil {
		return e.claimFailed(r.err, r.claimedAt)
	}
	c := r.c
	c.advance(r.rows, r.n)
	if len(r.rows) == 0 {
		// Idle marks pace the asking, whatever date the work is on.
		c.idleUntil = e.clk.Instant().Add(e.cfg.Poll)
		acks := c.acks.Load()
		if !e.finish(ctx, c.ID) && (c.unacked.Load() > 0 || c.acks.Load() != acks) {
			c.finishWait.Store(true)
		}
		return nil
	}
	sending := e.handOutWith(c, r.rt, r.rows, r.claimedAt, nil)
	now := e.clk.Now() // the clock the budgets are computed on (deal)
	if r.a.limiter != nil {
		r.a.limiter.AllowN(now, sending)
	}
	if c.senderLimiter != nil {
		c.senderLimiter.AllowN(now, sending)
	}
	if d.global != nil {
		d.global.AllowN(now, sending)
	}
	return nil
}

// drainClaims waits for the claims still running and hands their rows out.
func (e *Executor) drainClaims(ctx context.Context, d *dealer) {
	for d.inflight > 0 {
		if err := e.claimed(ctx, d, <-d.done); err != nil {
			e.log.Warn("dispatch", "err", err)
		}
	}
}

// newDealer is the dispatcher's starting state, with the global limiter.
func (e *Executor) newDealer() *dealer {
	d := &dealer{byID: map[int64]*campaign{}, limiters: map[int64]*rate.Limiter{},
		senderLimiters: map[int64]*rate.Limiter{}, done: make(chan claimDone, e.maxInflight())}
	if e.cfg.RatePerSecond > 0 {
		d.global = e.newLimiter(e.cfg.RatePerSecond)
	}
	return d
}

// newLimiter is a send-rate limiter whose bucket holds two claims' worth of rows:
// the budget accumulates to a whole batch (claimed in one statement, DESIGN.md §4),
// a second batch covers a dispatcher that woke late, and no further: the rate over
// any window exceeds perSecond by at most two batches, and a second's worth of
// tokens never goes out at once on top of it (667/s ran at 690/s that way).
func (e *Executor) newLimiter(perSecond float64) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(perSecond), max(1, min(int(perSecond), 2*e.cfg.BatchSize)))
}

// budgetWait is how long until l holds want tokens (want no larger than its burst).
func budgetWait(l *rate.Limiter, now time.Time, want int) time.Duration {
	missing := float64(want) - l.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	d := time.Duration(missing / float64(l.Limit()) * float64(time.Second))
	return min(max(d, 2*time.Millisecond), time.Second)
}

// deal makes one claim if it can and returns how long to wait before the next
// (0: go again at once).
func (e *Executor) deal(ctx context.Context, d *dealer) (time.Duration, error) {
	// Polling (refresh, idle marks) keeps the clock's pace; the rate budgets are
	// computed on its date, which tests hold still.
	pace, now := e.clk.Instant(), e.clk.Now()
	if wait, hold, err := e.settleLostClaims(ctx, d); hold {
		return wait, err
	}
	if pace.Sub(d.refreshed) >= e.cfg.Poll {
		if err := e.refresh(ctx, d); err != nil {
			return 0, err
		}
		d.refreshed = pace
	}
	free := int(e.free.Load())
	// A campaign's claim is of a whole batch, whatever the workers are doing: it
	// waits for a batch's room in the prefetch queue (depth() holds two), so every
	// claim pays the per-statement cost (DESIGN.md §4) for BatchSize rows. A message
	// stream claims for one free row of room: a message never waits behind a
	// campaign's batch.
	// Under a rate limit one claim runs at a time, streams' too: each is charged
	// with what the one before it took (maxInflight).
	if free < 1 || e.maxInflight() == 1 && d.inflight > 0 {
		return e.cfg.Poll, nil // a worker taking a job or a claim's result wakes us sooner
	}
	if id := e.live.ID(); id == 0 && e.started {
		return e.cfg.Poll, nil // registration wakes us; claims must carry the id
	}
	full := e.cfg.BatchSize
	// Under a rate limit the budget accumulates until it covers a whole claim (a
	// batch, at most a bucket), which then goes out in one statement: claims of
	// the one or two tokens that trickle in meanwhile would each pay the
	// per-statement cost for a row or two.
	rateWait := time.Duration(0)
	if d.global != nil {
		full = min(full, d.global.Burst())
	}
	n := min(free, full)
	if d.global != nil {
		if w := budgetWait(d.global, now, n); w > 0 {
			return w, nil
		}
	}
	// Every account's message stream goes first (stream.go), within the same limits.
	if claimed, err := e.dealStreams(ctx, d, n, now, &rateWait); err != nil || claimed {
		return 0, err
	}
	if free < full || d.inflight >= e.maxInflight() {
		if rateWait > 0 { // a stream waits for its budget
			return min(rateWait, e.cfg.Poll), nil
		}
		return e.cfg.Poll, nil // a worker taking a job or a claim's result wakes us sooner
	}
	for i := range d.accounts {
		a := d.accounts[(d.next+i)%len(d.accounts)]
		an := full
		if a.limiter != nil {
			an = min(an, a.limiter.Burst())
			if w := budgetWait(a.limiter, now, an); w > 0 {
				if rateWait == 0 || w < rateWait {
					rateWait = w
				}
				continue
			}
		}
		for j := range a.campaigns {
			c := a.campaigns[(a.next+j)%len(a.campaigns)]
			if c.finishWait.Load() && c.unacked.Load() == 0 {
				// Its rows in flight at its last (empty) claim are acknowledged: the
				// next claim finds it done, or finds a row they put back.
				c.finishWait.Store(false)
				c.idleUntil = clock.Instant{}
			}
			if c.isStream() || c.claiming || pace.Before(c.idleUntil) || c.routeErr != nil || c.shut(now) {
				continue
			}
			if e.pace.warmFull(e.routeOf(c), now) {
				continue // its sender's warm-up cap is used up until the next UTC day
			}
			cn := an
			if e.shallow(c, e.routeOf(c)) {
				if cn = min(cn, e.idleRoom()); cn < 1 {
					continue // jobDone wakes us when a worker frees up
				}
			}
			cn, w := senderBudget(c, now, cn)
			if w > 0 || (c.senderLimiter != nil && d.inflight > 0) {
				// A sender's budget is charged with what a claim took: one claim
				// of a rate-limited sender at a time.
				if w > 0 && (rateWait == 0 || w < rateWait) {
					rateWait = w
				}
				continue
			}
			a.next = (a.next + j + 1) % len(a.campaigns)
			d.next = (d.next + i + 1) % len(d.accounts)
			e.launch(ctx, d, a, c, cn)
			return 0, nil
		}
	}
	if rateWait > 0 {
		return rateWait, nil
	}
	return e.cfg.Poll, nil
}

// sameCampaignRow reports whether a campaign's row is unchanged since the last
// refresh. The sender ids are pointers, and two reads never share them: compared
// with ==, every campaign with a sender looked new on every refresh and lost its
// parsed templates, idle mark and claim cursor.
func sameCampaignRow(a, b store.CampaignListSendingRow) bool {
	if !samePtr(a.SenderID, b.SenderID) || !samePtr(a.StreamSenderID, b.StreamSenderID) ||
		!samePtr(a.AbVariants, b.AbVariants) || !samePtr(a.PoolID, b.PoolID) {
		return false
	}
	a.SenderID, a.StreamSenderID, b.SenderID, b.StreamSenderID = nil, nil, nil, nil
	a.PoolID, b.PoolID = nil, nil
	a.AbVariants, b.AbVariants = nil, nil
	return a == b
}

// shut reports whether c's sending window is closed at now, remembering when it
// opens so that until then the question costs a comparison.
func (c *campaign) shut(now time.Time) bool {
	if c.window == nil {
		return false
	}
	if now.Before(c.windowOpens) {
		return true
	}
	if next := c.window.Next(now); next.After(now) {
		c.windowOpens = next
		return true
	}
	return false
}

// bindWindow parses a campaign's stored sending window; one that does not parse
// (the API checks what it stores) is logged and read as none, as a bad zone in
// it reads as the fallback's.
func (e *Executor) bindWindow(c *campaign) {
	w, err := sendwindow.Parse([]byte(c.SendWindow))
	if w == nil && err == nil {
		return
	}
	if err != nil {
		e.log.Warn("campaign send_window unreadable: sent at any time", "campaign", c.ID, "err", err)
		return
	}
	s := w.Bind(c.WindowZone)
	c.window = &s
}

func samePtr[T comparable](a, b *T) bool { return a == b || (a != nil && b != nil && *a == *b) }

// refresh re-reads the campaigns being sent, keeping parsed templates and idle marks.
func (e *Executor) refresh(ctx context.Context, d *dealer) error {
	list, err := e.q.CampaignListSending(ctx)
	if err != nil {
		return err
	}
	e.metrics.activeCampaigns.Set(float64(len(list)))
	byID := make(map[int64]*campaign, len(list))
	var accounts []*account
	for _, row := range list {
		c := d.byID[row.ID]
		if c == nil || !sameCampaignRow(c.CampaignListSendingRow, row) {
			c = &campaign{CampaignListSendingRow: row}
			// A sequence's step campaign tracks like a campaign (its links were
			// stored when it was made); a message stream's messages carry their own.
			c.tmpl, c.tmplErr = e.cfg.Messages.Prepare(render.Campaign{TrackClicks: row.TrackClicks && !c.isStream(),
				FromEmail: row.FromEmail, FromName: row.FromName,
				ReplyTo: row.ReplyTo, Subject: row.Subject, HTML: row.HtmlTemplate, Text: row.TextTemplate})
			if !c.isStream() {
				if c.files, err = attachment.LoadCampaign(ctx, e.q, row.AccountID, row.ID); err != nil {
					return err
				}
				if err = e.prepareVariants(ctx, c); err != nil {
					return err
				}
				e.bindWindow(c)
			}
		} else {
			// A wake-up (NOTIFY, resume) may mean new work: forget the idle mark.
			c.idleUntil = clock.Instant{}
		}
		// Re-resolved on every refresh: a sender's new credentials or rate apply
		// within a poll (Senders caches what it built).
		e.route(ctx, d, c)
		byID[row.ID] = c
		if len(accounts) == 0 || accounts[len(accounts)-1].id != row.AccountID {
			accounts = append(accounts, &account{id: row.AccountID, limiter: e.accountLimiter(d, row.AccountID)})
		}
		a := accounts[len(accounts)-1]
		a.campaigns = append(a.campaigns, c)
	}
	// Keep each account's place in its own rotation across refreshes.
	old := map[int64]int{}
	for _, a := range d.accounts {
		old[a.id] = a.next
	}
	for _, a := range accounts {
		a.next = old[a.id] % len(a.campaigns)
	}
	d.accounts, d.byID = accounts, byID
	if len(accounts) > 0 {
		d.next %= len(accounts)
	}
	return nil
}

func (e *Executor) accountLimiter(d *dealer, id int64) *rate.Limiter {
	if e.cfg.AccountRatePerSecond <= 0 {
		return nil
	}
	l := d.limiters[id]
	if l == nil {
		l = e.newLimiter(e.cfg.AccountRatePerSecond)
		d.limiters[id] = l
	}
	return l
}

// claim claims up to n rows of c, resuming after c's cursor. A claim from the
// cursor that finds nothing is repeated from the start before it reports the
// campaign empty, and a claim that comes back short sends the cursor back to the
// start: rows handed back behind the cursor are picked up, never left behind.
func (e *Executor) claim(ctx context.Context, c *campaign, n int) ([]store.SendClaimBatchRow, error) {
	rows, err := e.claimFrom(ctx, c, e.routeOf(c), n, c.after)
	if err != nil {
		return nil, err
	}
	c.advance(rows, n)
	return rows, nil
}

// claimFrom claims up to n rows of c through rt after the cursor `after`, and from
// the start when that finds nothing. It leaves c alone, so it may run off the
// dispatch goroutine.
func (e *Executor) claimFrom(ctx context.Context, c *campaign, rt *route, n int, after int64) ([]store.SendClaimBatchRow, error) {
	at, began := e.clk.DB(), time.Now()
	rows, err := e.claimAfter(ctx, c, rt, n, after)
	if err == nil && len(rows) == 0 && after != 0 {
		rows, err = e.claimAfter(ctx, c, rt, n, 0)
	}
	if err == nil {
		e.signals.claimed.Signal(claimSignal{campaign: c.ID, rows: len(rows), at: at, took: time.Since(began)})
	}
	return rows, err
}

// advance moves c's cursor past a claim of n rows that returned rows: to its
// highest id when it came back full, to the start when it came back short.
func (c *campaign) advance(rows []store.SendClaimBatchRow, n int) {
	c.after = 0
	if len(rows) == n {
		for _, r := range rows {
			c.after = max(c.after, r.ID)
		}
	}
}

// claimAfter runs the claim statement for up to n rows of c with ids above after
// among the fresh ones, recording rt on them. It runs under context.WithoutCancel:
// a shutdown arriving mid-statement must not leave rows claimed in the database
// that no goroutine knows about.
func (e *Executor) claimAfter(ctx context.Context, c *campaign, rt *route, n int, after int64) ([]store.SendClaimBatchRow, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var executorID *int64
	if id := e.live.ID(); id != 0 {
		executorID = &id
	}
	var err error
	run := func() []store.SendClaimBatchRow {
		start := e.clk.Instant()
		var rows []store.SendClaimBatchRow
		// One round trip: the claim on its cached generic plan (ClaimPlanGeneric).
		rows, err = e.planned(ctx, (*store.Queries).ClaimPlanGeneric).SendClaimBatch(ctx, store.SendClaimBatchParams{
			Now:            e.clk.DB(),
			Lease:          pgtype.Interval{Microseconds: e.cfg.Lease.Microseconds(), Valid: true},
			ExecutorID:     executorID,
			CampaignID:     c.ID,
			AfterID:        after,
			N:              int32(n),
			ViaSenderID:    rt.senderID,
			ViaProvider:    rt.kind,
			ViaIdempotent:  rt.idempotent,
			RetryAmbiguous: c.AmbiguousPolicy == "retry",
		})
		e.metrics.claimSeconds.Observe(e.clk.Since(start).Seconds())
		return rows
	}
	var rows []store.SendClaimBatchRow
	if e.observeClaim != nil {
		rows = e.observeClaim(run)
	} else {
		rows = run()
	}
	if err != nil {
		return nil, err
	}
	e.metrics.claimBatch.Observe(float64(len(rows)))
	return rows, nil
}

// handOutWith gives rows claimed through rt to the workers and returns how many
// are to be sent. Rows the claim settled (suppressed, unknown) need no worker.
// claimedAt, read on this process's clock before the claim statement, dates the
// lease without trusting the database's clock to agree with ours. For a message
// stream msgs holds each row's message, in the order of rows (nil for a campaign).
func (e *Executor) handOutWith(c *campaign, rt *route, rows []store.SendClaimBatchRow, claimedAt time.Time, msgs []store.MessageClaimBatchRow) int {
	sending := 0
	for _, r := range rows {
		if r.Status != "sending" {
			e.metrics.sends.WithLabelValues(r.Status).Inc()
			continue
		}
		sending++
	}
	e.free.Add(int64(-sending))
	e.unacked.Add(int64(sending))
	c.unacked.Add(int64(sending))
	for i, r := range rows {
		if r.Status == "sending" {
			j := job{campaign: c, route: rt, row: r, leaseEnd: claimedAt.Add(e.cfg.Lease)}
			// Never blocks: each channel holds depth() jobs and at most `free` are claimed.
			if msgs != nil {
				j.message = &msgs[i]
				e.messageJobs <- j
			} else {
				e.jobs <- j
			}
		}
	}
	return sending
}

// shallow reports whether c's rows claimed through rt are claimed only for
// workers free to start them, with no queue ahead: under ambiguous_policy=skip a
// provider that cannot deduplicate leaves every leased row of a crashed process
// unknown, never sent, so each row queued ahead is a recipient a crash may cost.
// The operator may trade that for the queue's throughput (PrefetchNonIdempotent).
func (e *Executor) shallow(c *campaign, rt *route) bool {
	return !rt.idempotent && c.AmbiguousPolicy != "retry" && !e.cfg.PrefetchNonIdempotent
}

// idleRoom is how many rows a shallow claim may take now: the workers free to
// start a job less the rows already queued for them (or claimed for them by the
// claims under way). At none, the next worker to free up wakes the dispatcher.
// Dispatch goroutine only.
func (e *Executor) idleRoom() int {
	// Raised before the counters are read: a worker that frees up after the read
	// finds it and wakes the dispatcher, so the wake-up is never lost to a poll.
	e.idleWait.Store(true)
	queued := e.depth() - int(e.free.Load())
	n := e.cfg.Workers - int(e.busy.Load()) - queued
	if n > 0 {
		e.idleWait.Store(false)
	}
	return n
}

// slotsFreed returns n rows of room in the prefetch queue and wakes the dispatcher.
func (e *Executor) slotsFreed(n int) {
	e.free.Add(int64(n))
	signal(e.wakeDispatch)
}
