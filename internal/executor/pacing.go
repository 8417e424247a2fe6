package executor

import (
	"context"
	"errors"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sendonce/sendonce/internal/backoff"
	"github.com/sendonce/sendonce/internal/pacing"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// routePace is a sender's pacing, fixed with its route: its per-second limits by
// recipient domain group and its warm-up schedule (internal/pacing).
type routePace struct {
	limits map[string]float64
	warm   *pacing.Warmup
}

// deferralBackoff is how long a domain group rests after deferrals in a row from
// it: 5 s after the first, doubling, at most 10 minutes (or what the provider
// asked for, if longer).
var deferralBackoff = backoff.Exponential{Base: 5 * time.Second, Max: 10 * time.Minute}

// heldSpacing spaces the rows of a group without a limit held back while it
// rests, so they come back one after another rather than all at once.
const heldSpacing = 20 * time.Millisecond

// pacer paces sends per (sender, recipient domain group) and counts warming-up
// senders' daily caps. The lanes are this process's: each replica paces its own
// sends, so N replicas send up to N times a group's limit (docs/executor.md);
// the warm-up caps are counted in the database (sender_warmup_usage), so replicas
// share them. Safe for concurrent use by the workers.
//
// A row a lane cannot take soon is not kept waiting on a worker nor charged an
// attempt: the worker releases it unsent with a time it may be claimed again
// (SendReleaseMany's not_before), which the claim's (next_attempt_at, id) order
// already honours, so rows of other groups are claimed past it, and it keeps its
// lease history, in_doubt flag and exclusions at claim like any released row.
type pacer struct {
	q *store.Queries
	// rest is the deferral backoff (deferralBackoff; tests shorten it).
	rest backoff.Exponential
	mu   sync.Mutex
	// lanes by sender (0: the executor's own provider) and group.
	lanes map[laneKey]*lane
	// full: warming-up senders whose day's cap is used up, until the next UTC day.
	full map[int64]time.Time
}

type laneKey struct {
	sender int64
	group  string
}

// lane is one sender's pace to one domain group.
type lane struct {
	// next is the next free slot under the limit; horizon the time promised to
	// the last row held back (the held rows come back spaced, in line).
	next, horizon time.Time
	// until: the group deferred; nothing is sent to it before then. deferrals
	// counts deferrals in a row; after a rest, one probe goes first (probing),
	// and only its success opens the lane again.
	until     time.Time
	deferrals int
	probing   bool
	probeOut  bool
}

func newPacer(q *store.Queries) *pacer {
	return &pacer{q: q, rest: deferralBackoff, lanes: map[laneKey]*lane{}, full: map[int64]time.Time{}}
}

// paceOf is the pacing carried by a route (nil: none).
func paceOf(rt *route) *routePace {
	if rt == nil || rt.pace == nil {
		return &routePace{}
	}
	return rt.pace
}

func keyOf(rt *route, email string) laneKey {
	k := laneKey{group: pacing.GroupOf(email)}
	if rt != nil && rt.senderID != nil {
		k.sender = *rt.senderID
	}
	return k
}

// admission is a lane's answer to one send: wait that long and send, or (hold
// not zero) release the row unsent until hold.
type admission struct {
	wait time.Duration
	hold time.Time
	// probe: this send is the one probe after a rest (done must be told).
	probe bool
}

// admit asks whether a send to email through rt may go within maxWait of now.
func (p *pacer) admit(rt *route, email string, now time.Time, maxWait time.Duration) admission {
	k := keyOf(rt, email)
	limit := paceOf(rt).limits[k.group]
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.lanes[k]
	if l == nil {
		if limit <= 0 {
			return admission{} // nothing known of this group: no pacing
		}
		l = &lane{}
		p.lanes[k] = l
	}
	start := now
	if l.until.After(start) {
		start = l.until
	}
	interval := heldSpacing
	if limit > 0 {
		interval = time.Duration(float64(time.Second) / limit)
		if l.next.After(start) {
			start = l.next
		}
	}
	if l.probing && l.probeOut {
		// The probe after a rest is out: the others wait for its answer, back
		// in a second at the soonest.
		h := later(l.horizon, now.Add(time.Second))
		l.horizon = h.Add(interval)
		return admission{hold: h}
	}
	if start.Sub(now) <= maxWait {
		if limit > 0 {
			l.next = start.Add(interval)
		}
		a := admission{wait: start.Sub(now)}
		if l.probing {
			l.probeOut, a.probe = true, true
		}
		return a
	}
	h := later(l.horizon, start)
	l.horizon = h.Add(interval)
	// Back up to maxWait before its slot, so a claim's delay (up to a poll)
	// does not leave the slot unused: the worker waits out the rest.
	return admission{hold: later(h.Add(-maxWait), now.Add(time.Millisecond))}
}

// done tells the lane of email through rt a send's outcome: a deferral rests the
// group (backoff, longer for each in a row), a success after a rest opens it.
func (p *pacer) done(rt *route, email string, a admission, err error, now time.Time) {
	deferred, after := deferral(err)
	if !deferred && !a.probe {
		return
	}
	k := keyOf(rt, email)
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.lanes[k]
	if l == nil {
		l = &lane{}
		p.lanes[k] = l
	}
	if a.probe {
		l.probeOut = false
	}
	if !deferred {
		if err == nil {
			l.deferrals, l.probing = 0, false
		}
		return
	}
	if now.Before(l.until) && !a.probe {
		return // sent before the group's rest began: the rest already counts it
	}
	l.deferrals++
	rest := max(p.rest.Delay(l.deferrals), after)
	l.until = now.Add(backoff.Jitter(rest, 0.9, 1.1))
	l.probing = true
}

// restUntil is when the lane of email through rt opens again (zero: open).
func (p *pacer) restUntil(rt *route, email string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.lanes[keyOf(rt, email)]; l != nil {
		return l.until
	}
	return time.Time{}
}

// deferral reports whether err is a receiver's deferral or a provider's
// throttling: an SMTP 421 or a 4.7.x enhanced status (RFC 3463: policy, rate),
// an HTTP 429, or any temporary refusal that said when to come back. after is
// the wait it asked for (0: none).
func deferral(err error) (bool, time.Duration) {
	pe, ok := provider.AsError(err)
	if !ok || pe.Class != provider.Temporary || pe.Config {
		return false, 0
	}
	if pe.Code == 421 || pe.Code == 429 || pe.RetryAfter > 0 {
		return true, pe.RetryAfter
	}
	var te *textproto.Error
	if errors.As(err, &te) && te.Code >= 400 && te.Code < 500 {
		if te.Code == 421 || strings.HasPrefix(strings.TrimSpace(te.Msg), "4.7.") {
			return true, 0
		}
	}
	return false, 0
}

// warmTake takes one send from the day's warm-up cap of rt's sender, if it has a
// schedule. ok false: the cap is used up; hold is the next UTC day.
func (p *pacer) warmTake(ctx context.Context, rt *route, accountID int64, now time.Time) (hold time.Time, ok bool, err error) {
	w := paceOf(rt).warm
	if w == nil || rt.senderID == nil {
		return time.Time{}, true, nil
	}
	dayCap, _, capped := w.CapOn(now)
	if !capped {
		return time.Time{}, true, nil
	}
	id := *rt.senderID
	tomorrow := pacing.Day(now).Add(24 * time.Hour)
	p.mu.Lock()
	full := now.Before(p.full[id])
	p.mu.Unlock()
	if full {
		return tomorrow, false, nil
	}
	got, err := p.q.SenderWarmupTake(ctx, store.SenderWarmupTakeParams{AccountID: accountID, SenderID: id,
		Day: pgtype.Date{Time: pacing.Day(now), Valid: true}, Want: 1, DayCap: int32(dayCap)})
	if err != nil {
		return time.Time{}, false, err
	}
	if got > 0 {
		return time.Time{}, true, nil
	}
	p.mu.Lock()
	p.full[id] = tomorrow
	p.mu.Unlock()
	return tomorrow, false, nil
}

// warmFull reports whether rt's sender used up today's warm-up cap (as this
// process last saw it): its campaigns and message streams are not claimed until
// the next UTC day.
func (p *pacer) warmFull(rt *route, now time.Time) bool {
	if rt == nil || rt.senderID == nil || rt.pace == nil || rt.pace.warm == nil {
		return false
	}
	return p.senderFull(*rt.senderID, now)
}

// senderFull reports whether sender id used up today's warm-up cap (as this
// process last saw it).
func (p *pacer) senderFull(id int64, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return now.Before(p.full[id])
}

// samePace reports whether two routes pace alike.
func samePace(a, b *routePace) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.limits) != len(b.limits) || (a.warm == nil) != (b.warm == nil) {
		return false
	}
	for k, v := range a.limits {
		if b.limits[k] != v {
			return false
		}
	}
	if a.warm == nil {
		return true
	}
	return a.warm.Preset == b.warm.Preset && a.warm.Start == b.warm.Start && slices.Equal(a.warm.Caps, b.warm.Caps)
}

// maxPaceWait is the longest a worker waits for its row's slot in a domain
// group; a row whose slot is further off is released until then.
const maxPaceWait = time.Second

// errHeld is a send that its sender's warm-up held back after its lane admitted
// it: it tells the lane the slot went unused.
var errHeld = errors.New("held back by the warm-up cap")

// paced applies a row's pacing before its send, a campaign's or a message's
// alike: it waits for the row's slot in its domain group, or returns the release
// that holds the row back (uncharged, until its slot or the next UTC day). A
// pool's member whose warm-up cap is used up passes the row to the pool's next
// usable member at once instead (released now, re-routed at the refresh), as
// providers route a warming IP's overflow through their warm ones.
func (e *Executor) paced(ctx context.Context, j job, rt *route, left time.Duration) (admission, *result) {
	r := j.row
	hold := func(a admission, until time.Time) (admission, *result) {
		if a.probe {
			e.pace.done(rt, r.Email, a, errHeld, e.clk.Now())
		}
		return a, &result{id: r.ID, attempts: r.Attempts, status: statusRelease, next: until}
	}
	a := e.pace.admit(rt, r.Email, e.clk.Now(), min(maxPaceWait, left/2))
	if !a.hold.IsZero() {
		return hold(admission{}, a.hold)
	}
	if a.wait > 0 {
		t := time.NewTimer(a.wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return hold(a, time.Time{})
		case <-t.C:
		}
	}
	until, ok, err := e.pace.warmTake(ctx, rt, r.AccountID, e.clk.Now())
	if err != nil {
		e.log.Warn("warm-up cap: could not count a send; the row waits", "err", err)
		return hold(a, e.clk.Now().Add(time.Second))
	}
	if !ok {
		if e.overflow(rt) {
			signal(e.wakeRefresh)
			return hold(a, e.clk.Now())
		}
		return hold(a, until)
	}
	return a, nil
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
