package executor

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// Transactional messages are send rows of a per-account message stream: a campaign
// of kind kindMessages that is always sending. Everything after the claim is the
// campaigns' path (workers, the provider call keyed by job_id, the completer's
// batched ack, retries, the rescuer, ambiguous_policy); what differs is the claim
// (MessageClaimBatch: each message's own content and its category's suppression
// rules) and where the message comes from (MessageBuilder). Streams are dealt
// before any campaign of any account (dealStreams), within the same rate limits.

// kindMessages is the campaigns.kind of a message stream.
const kindMessages = "messages"

// MessageBuilder builds the provider message of one claimed transactional message.
// An error fails that message permanently (its content cannot render).
type MessageBuilder interface {
	BuildMessage(r store.MessageClaimBatchRow) (provider.Message, error)
}

// isStream reports whether c is an account's message stream.
func (c *campaign) isStream() bool { return c.Kind == kindMessages }

// dealStreams makes one claim from the first message stream, in a rotation of
// accounts of its own, that has work and budget, and reports whether it claimed.
// An account has its default stream and one per sender its messages named. Each
// account's limiter binds its streams as it binds its campaigns (and each sender's
// its stream); an account out of budget lowers *rateWait as the campaign loop does.
func (e *Executor) dealStreams(ctx context.Context, d *dealer, n int, now time.Time, rateWait *time.Duration) (bool, error) {
	if e.cfg.Transactional == nil {
		return false, nil // this process sends no messages
	}
	if err := e.wakeStreams(ctx, d); err != nil {
		return false, err
	}
	for i := range d.accounts {
		k := (d.nextStream + i) % len(d.accounts)
		a := d.accounts[k]
		for _, c := range a.campaigns {
			if !c.isStream() {
				continue
			}
			claimed, err := e.dealStream(ctx, d, a, c, n, now, rateWait)
			if err != nil || claimed {
				if claimed {
					d.nextStream = (k + 1) % len(d.accounts)
				}
				return claimed, err
			}
		}
	}
	return false, nil
}

// dealStream makes one claim of up to n rows from stream c of account a if it is
// due and has budget, and reports whether the claim found rows.
func (e *Executor) dealStream(ctx context.Context, d *dealer, a *account, c *campaign, n int, now time.Time,
	rateWait *time.Duration) (bool, error) {
	// A stream whose sender cannot be built waits, as a campaign does, rather
	// than sending through the executor's provider; so does one whose sender is
	// paused after repeated auth/config failures (a stream is never paused itself),
	// until the sender is fixed or MessageFailHeld gives up on its messages.
	if c.routeErr != nil || c.SenderPaused || !c.wake.due(e.clk.Now()) {
		return false, nil
	}
	if e.pace.warmFull(e.routeOf(c), now) {
		return false, nil // its sender's warm-up cap is used up until the next UTC day
	}
	lower := func(w time.Duration) {
		if *rateWait == 0 || w < *rateWait {
			*rateWait = w
		}
	}
	an := n
	if a.limiter != nil {
		an = min(an, a.limiter.Burst())
		if w := budgetWait(a.limiter, now, an); w > 0 {
			lower(w)
			return false, nil
		}
	}
	room := int(e.free.Load()) // the prefetch queue's room (depth)
	rt := e.routeOf(c)
	if e.shallow(c, rt) {
		room = min(room, e.idleRoom())
	}
	if room < 1 {
		return false, nil
	}
	an, w := senderBudget(c, now, min(an, room))
	if w > 0 {
		lower(w)
		return false, nil
	}
	claimedAt := e.clk.Now() // before the statement: the lease began no earlier
	msgs, err := e.claimMessages(ctx, c, rt, an)
	if err != nil {
		return false, e.claimFailed(err, claimedAt)
	}
	// A short claim took every due row: the stream sleeps until NOTIFY names it
	// or the sweep finds a row due.
	c.wake = streamWake{quiet: len(msgs) < an}
	if len(msgs) == 0 {
		return false, nil
	}
	rows := make([]store.SendClaimBatchRow, len(msgs))
	for i, m := range msgs {
		rows[i] = store.SendClaimBatchRow{ID: m.ID, AccountID: m.AccountID, SubscriberID: m.SubscriberID,
			Email: m.Email, JobID: m.JobID, Status: m.Status, Attempts: m.Attempts, LeaseUntil: m.LeaseUntil,
			ExecutorID: m.ExecutorID, Name: m.ToName, Attributes: m.Data}
	}
	sending := e.handOutWith(c, rt, rows, claimedAt, msgs)
	if a.limiter != nil {
		a.limiter.AllowN(now, sending)
	}
	if d.global != nil {
		d.global.AllowN(now, sending)
	}
	if c.senderLimiter != nil {
		c.senderLimiter.AllowN(now, sending)
	}
	return true, nil
}

// streamWake says when a message stream is claimed. An idle stream costs no
// statement: after a claim that came back short (every due row taken) it is quiet,
// and claimed again only when a NOTIFY names it (a new message, on commit) or when
// the earliest next_attempt_at the sweep found (a send_at, a retry, a rescued or
// released row, a lost notification) has come. The zero value is due: a stream
// the dispatcher has just learnt of is claimed once.
type streamWake struct {
	quiet  bool
	wakeAt time.Time // when quiet: when a queued row is due, on the executor's clock (zero: none known)
}

func (w streamWake) due(now time.Time) bool {
	return !w.quiet || (!w.wakeAt.IsZero() && !now.Before(w.wakeAt))
}

// wakeStreams wakes the streams NOTIFY named since the last deal, and every
// MessageSweep runs the sweep: one statement for all streams (MessageStreamsDue),
// which sets each quiet stream's wake time to its earliest queued row.
func (e *Executor) wakeStreams(ctx context.Context, d *dealer) error {
	for _, id := range e.notified.take() {
		if c := d.byID[id]; c != nil && c.isStream() {
			c.wake = streamWake{}
		}
	}
	if e.clk.Since(e.streamsSwept) < e.cfg.MessageSweep {
		return nil
	}
	rows, err := e.onIndexPaths(ctx).MessageStreamsDue(ctx, e.clk.DB())
	if err != nil {
		return err
	}
	e.streamsSwept = e.clk.Instant()
	// The database says how long until each stream's row is due; the wake time is
	// that far ahead on this process's clock, which due() reads.
	now := e.clk.Now()
	for _, r := range rows {
		at := now.Add(time.Duration(r.DueInUs) * time.Microsecond)
		if c := d.byID[r.ID]; c != nil && c.isStream() && c.wake.quiet &&
			(c.wake.wakeAt.IsZero() || at.Before(c.wake.wakeAt)) {
			c.wake.wakeAt = at
		}
	}
	return nil
}

// notifiedSet collects the campaign ids named by NOTIFY payloads, from the
// listener for the dispatcher.
type notifiedSet struct {
	mu  sync.Mutex
	ids []int64
}

// add records a payload that is a campaign id; others (and a flood beyond what
// the dispatcher could ever need between two deals) are dropped: the sweep finds
// what a dropped notification announced.
func (s *notifiedSet) add(payload string) {
	id, err := strconv.ParseInt(payload, 10, 64)
	if err != nil {
		return
	}
	s.mu.Lock()
	if len(s.ids) < 10000 {
		s.ids = append(s.ids, id)
	}
	s.mu.Unlock()
}

func (s *notifiedSet) take() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.ids
	s.ids = nil
	return ids
}

// claimMessages runs MessageClaimBatch for up to n rows of stream c through rt,
// under context.WithoutCancel like claim.
func (e *Executor) claimMessages(ctx context.Context, c *campaign, rt *route, n int) ([]store.MessageClaimBatchRow, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var executorID *int64
	if id := e.live.ID(); id != 0 {
		executorID = &id
	}
	start := e.clk.Instant()
	rows, err := e.planned(ctx, (*store.Queries).SendPlanLinear).MessageClaimBatch(ctx, store.MessageClaimBatchParams{
		Now:            e.clk.DB(),
		Lease:          pgtype.Interval{Microseconds: e.cfg.Lease.Microseconds(), Valid: true},
		ExecutorID:     executorID,
		CampaignID:     c.ID,
		N:              int32(n),
		ViaSenderID:    rt.senderID,
		ViaProvider:    rt.kind,
		ViaIdempotent:  rt.idempotent,
		RetryAmbiguous: c.AmbiguousPolicy == "retry",
	})
	e.metrics.claimSeconds.Observe(e.clk.Since(start).Seconds())
	if err != nil {
		return nil, err
	}
	e.metrics.claimBatch.Observe(float64(len(rows)))
	return rows, nil
}
