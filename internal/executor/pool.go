package executor

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/sendonce/sendonce/internal/provider"
)

// PoolRouter is implemented by a Senders that knows the accounts' sender pools
// (docs/providers.md "Sender pools and failover"). Without it a campaign naming a
// pool waits out of the deal, as one whose sender cannot be built.
type PoolRouter interface {
	// Pool returns the senders of pool id of the account, primary first.
	Pool(ctx context.Context, accountID, poolID int64) ([]PoolMember, error)
}

// PoolMember is one sender of a pool as the executor sees it.
type PoolMember struct {
	SenderID int64
	// Held: the sender is paused (repeated auth/config failures) or its route's
	// complaint guard tripped; the pool passes over it until that is cleared.
	Held bool
}

// poolPick is where a pool campaign's route stands in its pool: the members as
// read at the refresh, and the position of the one the route goes through (0:
// the primary).
type poolPick struct {
	id       int64
	members  []PoolMember
	position int
}

// refusals remembers the senders that refused before accepting (a RouteDown
// failure): a pool passes over such a sender for Config.PoolFailback, then tries
// it again (going back to the primary once it answers). Per process: each
// executor learns on its own, from its own sends. Safe for concurrent use.
type refusals struct {
	mu    sync.Mutex
	until map[int64]time.Time
}

// trip passes over sender id until `until`; it reports whether the sender was
// usable before (the first refusal of a run).
func (r *refusals) trip(id int64, until time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.until == nil {
		r.until = map[int64]time.Time{}
	}
	was, ok := r.until[id]
	r.until[id] = until
	return !ok || !time.Now().Before(was)
}

// down reports whether sender id is passed over at now.
func (r *refusals) down(id int64, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	u, ok := r.until[id]
	if ok && !now.Before(u) {
		delete(r.until, id) // failback: the next route tries it again
		return false
	}
	return ok
}

// poolRoute resolves a pool campaign's route: its first member neither held nor
// refusing that can be built, else its first member not held (every one refuses).
// None (every member held or unbuildable): the campaign waits out of the deal,
// its rows queued and uncharged, until one is usable again.
// Dispatcher goroutine only.
func (e *Executor) poolRoute(ctx context.Context, d *dealer, c *campaign) {
	pr, ok := e.cfg.Senders.(PoolRouter)
	if !ok {
		c.routeErr = fmt.Errorf("pool %d: this executor routes no pools", *c.PoolID)
		return
	}
	members, err := pr.Pool(ctx, c.AccountID, *c.PoolID)
	if err != nil {
		c.routeErr = err
		e.log.Warn("sender pool unavailable: its campaign waits", "campaign", c.ID, "pool", *c.PoolID, "err", err)
		return
	}
	now := time.Now()
	var skipped []string
	// First the members neither held nor refusing nor out of today's warm-up cap;
	// when every one that is not held refuses, the first of them anyway: a refusal only orders the pool, and the
	// rows then wait out the refusals as through a single sender (retried with
	// backoff, failover() having nowhere to move them) instead of holding the
	// whole campaign until PoolFailback ends.
	for _, refusing := range []bool{false, true} {
		skipped = skipped[:0]
		for i, m := range members {
			if m.Held || !refusing && (e.refused.down(m.SenderID, now) || e.pace.senderFull(m.SenderID, e.clk.Now())) {
				skipped = append(skipped, strconv.FormatInt(m.SenderID, 10))
				continue
			}
			r, err := e.cfg.Senders.Route(ctx, c.AccountID, m.SenderID)
			if err != nil {
				skipped = append(skipped, strconv.FormatInt(m.SenderID, 10))
				continue
			}
			e.useRoute(d, c, m.SenderID, r, &poolPick{id: *c.PoolID, members: members, position: i})
			return
		}
	}
	c.routeErr = fmt.Errorf("pool %d: no usable sender (held or unbuildable: %v)", *c.PoolID, skipped)
	e.log.Warn("no sender of the pool is usable: its campaign waits", "campaign", c.ID, "pool", *c.PoolID,
		"senders", skipped)
}

// failover judges a failed send through a pool's route: when the failure refused
// the route before anything was handed over (provider.Error.RouteDown, never an
// Ambiguous answer), the sender is passed over for PoolFailback, the dispatcher
// re-routes, and it reports whether another member of the pool is usable, in
// which case the row goes back to the queue uncharged (statusRelease) to be
// claimed through that member; the claim records the new route on the row.
// A row already in doubt from an earlier attempt keeps in_doubt: the claim through
// the other member then settles it by the in-doubt rule (unknown under skip).
func (e *Executor) failover(rt *route, err error) bool {
	pe, ok := provider.AsError(err)
	if rt.pool == nil || rt.senderID == nil || !ok || !pe.RouteDown || pe.Class == provider.Ambiguous {
		return false
	}
	now := time.Now()
	if e.refused.trip(*rt.senderID, now.Add(e.cfg.PoolFailback)) {
		e.log.Warn("pool sender refused: failing over", "pool", rt.pool.id, "sender", *rt.senderID,
			"position", rt.pool.position, "for", e.cfg.PoolFailback.String(), "err", err)
		signal(e.wakeRefresh)
	}
	if e.otherMember(rt, now) {
		e.metrics.poolFailovers.Inc()
		return true
	}
	return false
}

// otherMember reports whether a pool route's pool has a member other than the
// route's own that is usable at now: neither held, refusing nor out of today's
// warm-up cap.
func (e *Executor) otherMember(rt *route, now time.Time) bool {
	for _, m := range rt.pool.members {
		if m.SenderID != *rt.senderID && !m.Held && !e.refused.down(m.SenderID, now) && !e.pace.senderFull(m.SenderID, e.clk.Now()) {
			return true
		}
	}
	return false
}

// overflow reports whether a row that rt's sender's warm-up cap holds back can go
// through another member of rt's pool today instead (false: rt is no pool's).
func (e *Executor) overflow(rt *route) bool {
	return rt.pool != nil && rt.senderID != nil && e.otherMember(rt, time.Now())
}

// positionLabel names a pool route's member for the metrics ("" when the route is
// not a pool's).
func (rt *route) positionLabel() string {
	if rt.pool == nil {
		return ""
	}
	return strconv.Itoa(rt.pool.position)
}

// outcomeLabel is a pool send's outcome for sendonce_pool_sends_total.
func outcomeLabel(err error) string {
	if err == nil {
		return "sent"
	}
	if pe, ok := provider.AsError(err); ok && pe.RouteDown && pe.Class != provider.Ambiguous {
		return "refused"
	}
	return "failed"
}
