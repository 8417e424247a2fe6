package executor

import (
	"context"
	"time"

	"golang.org/x/time/rate"
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
}

// route resolves c's provider: its sender's, or the executor's own when the
// campaign has no sender or the executor has no Senders. A sender that cannot be
// built keeps the campaign out of the deal until it can.
func (e *Executor) route(ctx context.Context, d *dealer, c *campaign) {
	id := c.sender()
	if id == nil || e.cfg.Senders == nil {
		c.provider, c.senderLimiter, c.routeErr = e.provider, nil, nil
		return
	}
	r, err := e.cfg.Senders.Route(ctx, c.AccountID, *id)
	if err != nil {
		// Workers may be sending this campaign's claimed rows right now: its
		// provider is left as it was, and no new claim is made while routeErr holds.
		c.routeErr = err
		e.log.Warn("sender unavailable: its campaign waits", "campaign", c.ID, "sender", *id, "err", err)
		return
	}
	var limiter *rate.Limiter
	if r.RatePerSecond > 0 {
		limiter = d.senderLimiters[*id]
		if limiter == nil || float64(limiter.Limit()) != r.RatePerSecond {
			limiter = e.newLimiter(r.RatePerSecond)
			d.senderLimiters[*id] = limiter
		}
	}
	c.provider, c.senderLimiter, c.routeErr = r.Provider, limiter, nil
}

// sender is the sender c sends through: its own, or for a message stream the
// account's default sender; nil means the environment's provider.
func (c *campaign) sender() *int64 {
	if c.StreamSenderID != nil {
		return c.StreamSenderID
	}
	return c.SenderID
}

// report tells Senders the outcome of one send through a campaign's sender.
func (e *Executor) report(j job, err error) {
	c := j.campaign
	id := c.sender()
	if id == nil || e.cfg.Senders == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.sendCtx), 10*time.Second)
	defer cancel()
	e.cfg.Senders.Report(ctx, c.AccountID, *id, j.row.Email, err)
}

// senderBudget is how long until c's sender limiter allows n more sends (0: now).
func senderBudget(c *campaign, now time.Time, n int) (int, time.Duration) {
	if c.senderLimiter == nil {
		return n, 0
	}
	n = min(n, c.senderLimiter.Burst())
	return n, budgetWait(c.senderLimiter, now, n)
}

// providerOf is c's provider (the executor's for campaigns built by hand in tests).
func (e *Executor) providerOf(c *campaign) Provider {
	if c.provider != nil {
		return c.provider
	}
	return e.provider
}
