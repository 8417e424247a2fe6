package executor

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	"github.com/sendonce/sendonce/internal/pacing"
)

// Senders gives each campaign the provider of its sender (an account's own SMTP
// relay, HTTP endpoint or provider account). Nil in Config: every campaign goes
// through the executor's provider.
type Senders interface {
	// Route returns the route of sender id of the account. It is called as the
	// dispatcher refreshes its campaigns; the implementation caches built providers.
	Route(ctx context.Context, accountID, senderID int64) (Route, error)
	// Report is told the outcome of every send through a route (err nil: sent), to
	// keep the sender's health: repeated auth/config failures pause its campaigns.
	Report(ctx context.Context, accountID, senderID int64, email string, err error)
}

// Route is how one sender sends.
type Route struct {
	Provider Provider
	// RatePerSecond caps the sender's sends across its campaigns; 0: no cap.
	RatePerSecond float64
	// Kind names the provider (the sender's type), recorded on every row claimed
	// through the route; empty: "sender".
	Kind string
	// DomainLimits cap the sender's sends per recipient domain group (by the
	// group's name, internal/pacing), on top of RatePerSecond; nil: none.
	DomainLimits map[string]float64
	// Warmup is the sender's warm-up schedule; nil: none.
	Warmup *pacing.Warmup
}

// route is what a claim sends its rows through, fixed at claim: the claim
// statement records it on the rows (via_sender_id, via_provider, via_idempotent)
// for the rescuer, and the workers send those rows through exactly this provider
// and report to exactly this sender, whatever the dispatcher re-routes meanwhile.
// Immutable once built; a campaign publishes its current one atomically.
type route struct {
	provider Provider
	senderID *int64 // nil: the executor's own provider
	kind     string
	// idempotent is the provider's own answer (Provider.Idempotent): whether a
	// replay of a job id is dropped, so an interrupted send may be repeated.
	idempotent bool
	// pool is set when the route is a sender pool's member (pool.go).
	pool *poolPick
	// pace is the sender's pacing (nil: none): pacing.go.
	pace *routePace
}

// ownRoute is the route through the executor's provider.
func (e *Executor) ownRoute() *route {
	return &route{provider: e.provider, kind: e.cfg.ProviderName, idempotent: e.provider.Idempotent()}
}

// route resolves c's route: its sender's, or the executor's own when the
// campaign has no sender or the executor has no Senders, and publishes it for the
// next claims. A sender that cannot be built keeps the campaign out of the deal
// until it can. Dispatcher goroutine only (senderLimiter, routeErr).
func (e *Executor) route(ctx context.Context, d *dealer, c *campaign) {
	if c.PoolID != nil && e.cfg.Senders != nil {
		e.poolRoute(ctx, d, c)
		return
	}
	id := c.sender()
	if id == nil || e.cfg.Senders == nil {
		c.rt.Store(e.own)
		c.senderLimiter, c.routeErr = nil, nil
		return
	}
	r, err := e.cfg.Senders.Route(ctx, c.AccountID, *id)
	if err != nil {
		// Workers may be sending this campaign's claimed rows right now, through
		// the routes of their claims; no new claim is made while routeErr holds.
		c.routeErr = err
		e.log.Warn("sender unavailable: its campaign waits", "campaign", c.ID, "sender", *id, "err", err)
		return
	}
	e.useRoute(d, c, *id, r, nil)
}

// useRoute publishes r, sender sid's route (a pool's member when pick is set), as
// c's route for its next claims, with the sender's limiter. Dispatcher goroutine only.
func (e *Executor) useRoute(d *dealer, c *campaign, sid int64, r Route, pick *poolPick) {
	var limiter *rate.Limiter
	if r.RatePerSecond > 0 {
		limiter = d.senderLimiters[sid]
		if limiter == nil || float64(limiter.Limit()) != r.RatePerSecond {
			limiter = e.newLimiter(r.RatePerSecond)
			d.senderLimiters[sid] = limiter
		}
	}
	kind := r.Kind
	if kind == "" {
		kind = "sender"
	}
	var pace *routePace
	if len(r.DomainLimits) > 0 || r.Warmup != nil {
		pace = &routePace{limits: r.DomainLimits, warm: r.Warmup}
	}
	if old := c.rt.Load(); old == nil || old.provider != r.Provider || old.senderID == nil || *old.senderID != sid ||
		old.kind != kind || pick != nil || old.pool != nil || !samePace(old.pace, pace) {
		c.rt.Store(&route{provider: r.Provider, senderID: &sid, kind: kind, idempotent: r.Provider.Idempotent(),
			pool: pick, pace: pace})
	}
	c.senderLimiter, c.routeErr = limiter, nil
}

// routeOf is c's current route (the executor's own for campaigns built by hand in
// tests). Safe from any goroutine.
func (e *Executor) routeOf(c *campaign) *route {
	if r := c.rt.Load(); r != nil {
		return r
	}
	return e.own
}

// sender is the sender c sends through: its own, or for a message stream the
// account's default sender; nil means the environment's provider.
func (c *campaign) sender() *int64 {
	if c.StreamSenderID != nil {
		return c.StreamSenderID
	}
	return c.SenderID
}

// report tells Senders the outcome of one send through the sender of its route.
func (e *Executor) report(rt *route, accountID int64, email string, err error) {
	if rt.senderID == nil || e.cfg.Senders == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.sendCtx), 10*time.Second)
	defer cancel()
	e.cfg.Senders.Report(ctx, accountID, *rt.senderID, email, err)
}

// senderBudget is how long until c's sender limiter allows n more sends (0: now).
func senderBudget(c *campaign, now time.Time, n int) (int, time.Duration) {
	if c.senderLimiter == nil {
		return n, 0
	}
	n = min(n, c.senderLimiter.Burst())
	return n, budgetWait(c.senderLimiter, now, n)
}
