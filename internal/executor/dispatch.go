package executor

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"golang.org/x/time/rate"

	"github.com/sendonce/sendonce/internal/message"
	"github.com/sendonce/sendonce/internal/store"
)

// campaign is what the dispatcher and workers know of one campaign being sent.
type campaign struct {
	store.CampaignListSendingRow
	tmpl    *message.Prepared
	tmplErr error // a template that does not parse fails every recipient permanently
	// idleUntil: the last claim came back empty; ask again after this (dispatcher only).
	idleUntil time.Time
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
	accounts  []*account
	next      int // the account to serve next
	byID      map[int64]*campaign
	limiters  map[int64]*rate.Limiter
	global    *rate.Limiter
	refreshed time.Time
}

// dispatch claims work for free worker slots, dealing campaigns round-robin per
// account so one tenant's huge campaign cannot starve another's small one.
func (e *Executor) dispatch(ctx context.Context) {
	defer e.dispatcher.Done()
	d := e.newDealer()
	backoff := newStepBackoff(100*time.Millisecond, 10*time.Second)
	for ctx.Err() == nil {
		wait, err := e.deal(ctx, d)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			b := backoff.next()
			e.log.Warn("dispatch", "err", err, "backoff", b.String())
			if !sleep(ctx, b) {
				return
			}
			continue
		}
		backoff.reset()
		if wait == 0 {
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-e.wakeDispatch:
		case <-e.wakeRefresh:
			d.refreshed = time.Time{}
		case <-t.C:
		}
		t.Stop()
	}
}

// newDealer is the dispatcher's starting state, with the global limiter.
func (e *Executor) newDealer() *dealer {
	d := &dealer{byID: map[int64]*campaign{}, limiters: map[int64]*rate.Limiter{}}
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
	now := e.clock()
	if now.Sub(d.refreshed) >= e.cfg.Poll {
		if err := e.refresh(ctx, d); err != nil {
			return 0, err
		}
		d.refreshed = now
	}
	e.mu.Lock()
	free := e.free
	e.mu.Unlock()
	// Claims of one row waste the per-statement cost that dominates (DESIGN.md §4):
	// wait until half the slots a full claim could use are free.
	if free < max(1, min(e.cfg.BatchSize, e.cfg.Workers)/2) {
		return e.cfg.Poll, nil // a freed slot wakes us sooner
	}
	if id, _, _ := e.live.get(); id == 0 && e.started {
		return e.cfg.Poll, nil // registration wakes us; claims must carry the id
	}
	n := min(free, e.cfg.BatchSize)
	// Under a rate limit the budget accumulates until it covers a whole claim (the
	// free slots, at most a bucket), which then goes out in one statement: claims
	// of the one or two tokens that trickle in meanwhile would each pay the
	// per-statement cost for a row or two.
	rateWait := time.Duration(0)
	if d.global != nil {
		n = min(n, d.global.Burst())
		if w := budgetWait(d.global, now, n); w > 0 {
			return w, nil
		}
	}
	for i := range d.accounts {
		a := d.accounts[(d.next+i)%len(d.accounts)]
		an := n
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
			if now.Before(c.idleUntil) {
				continue
			}
			claimedAt := e.clock() // before the statement: the lease began no earlier
			rows, err := e.claim(ctx, c, an)
			if err != nil {
				return 0, err
			}
			if len(rows) == 0 {
				c.idleUntil = now.Add(e.cfg.Poll)
				e.finish(ctx, c.ID)
				continue
			}
			a.next = (a.next + j + 1) % len(a.campaigns)
			d.next = (d.next + i + 1) % len(d.accounts)
			sending := e.handOut(c, rows, claimedAt)
			if a.limiter != nil {
				a.limiter.AllowN(now, sending)
			}
			if d.global != nil {
				d.global.AllowN(now, sending)
			}
			return 0, nil
		}
	}
	if rateWait > 0 {
		return rateWait, nil
	}
	return e.cfg.Poll, nil
}

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
		if c == nil || c.CampaignListSendingRow != row {
			c = &campaign{CampaignListSendingRow: row}
			c.tmpl, c.tmplErr = e.cfg.Messages.Prepare(message.Campaign{FromEmail: row.FromEmail, FromName: row.FromName,
				ReplyTo: row.ReplyTo, Subject: row.Subject, HTML: row.HtmlTemplate, Text: row.TextTemplate})
		} else {
			// A wake-up (NOTIFY, resume) may mean new work: forget the idle mark.
			c.idleUntil = time.Time{}
		}
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

// claim runs the claim statement for up to n rows of c. It runs under
// context.WithoutCancel: a shutdown arriving mid-statement must not leave rows
// claimed in the database that no goroutine knows about.
func (e *Executor) claim(ctx context.Context, c *campaign, n int) ([]store.SendClaimBatchRow, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var executorID *int64
	if id, _, _ := e.live.get(); id != 0 {
		executorID = &id
	}
	var err error
	run := func() []store.SendClaimBatchRow {
		start := time.Now()
		var rows []store.SendClaimBatchRow
		rows, err = e.q.SendClaimBatch(ctx, store.SendClaimBatchParams{
			Now:        e.now(),
			Lease:      pgtype.Interval{Microseconds: e.cfg.Lease.Microseconds(), Valid: true},
			ExecutorID: executorID,
			CampaignID: c.ID,
			N:          int32(n),
		})
		e.metrics.claimSeconds.Observe(time.Since(start).Seconds())
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

// handOut gives claimed rows to the workers and returns how many are to be sent.
// Rows the claim marked suppressed need no worker. claimedAt, read on this
// process's clock before the claim statement, dates the lease without trusting
// the database's clock to agree with ours.
func (e *Executor) handOut(c *campaign, rows []store.SendClaimBatchRow, claimedAt time.Time) int {
	sending := 0
	for _, r := range rows {
		if r.Status != "sending" {
			e.metrics.sends.WithLabelValues(r.Status).Inc()
			continue
		}
		sending++
	}
	e.mu.Lock()
	e.free -= sending
	e.mu.Unlock()
	for _, r := range rows {
		if r.Status == "sending" {
			// Never blocks: the channel holds Workers jobs and at most `free` are claimed.
			e.jobs <- job{campaign: c, row: r, leaseEnd: claimedAt.Add(e.cfg.Lease)}
		}
	}
	return sending
}

// slotsFreed returns n worker slots and wakes the dispatcher.
func (e *Executor) slotsFreed(n int) {
	e.mu.Lock()
	e.free += n
	e.mu.Unlock()
	signal(e.wakeDispatch)
}
