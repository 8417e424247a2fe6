package executor

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// schedule starts due campaigns every Tick and whenever a NOTIFY (approve, resume,
// reschedule) or a reconnect of the listener wakes it.
func (e *Executor) schedule(ctx context.Context) {
	defer e.loops.Done()
	for {
		if _, err := e.startDue(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("start due campaigns", "err", err)
		}
		// Resumed campaigns need no start, but the dispatcher must see them.
		signal(e.wakeRefresh)
		timer := time.NewTimer(e.untilNextDue(ctx))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-e.wakeSched:
			timer.Stop()
		}
	}
}

// untilNextDue is how long the scheduler may sleep: until the next approved
// campaign falls due, at most Tick (the fallback poll), at least 10ms.
func (e *Executor) untilNextDue(ctx context.Context) time.Duration {
	next, err := e.q.CampaignNextDue(ctx)
	if err != nil || next == nil {
		return e.cfg.Tick
	}
	return min(max(next.Sub(e.clock()), 10*time.Millisecond), e.cfg.Tick)
}

// startDue starts every approved campaign whose time has come and returns how many
// this executor started (others may have won some).
func (e *Executor) startDue(ctx context.Context) (int, error) {
	ids, err := e.q.CampaignListDue(ctx, e.now())
	if err != nil {
		return 0, err
	}
	started := 0
	for _, id := range ids {
		ok, err := e.startCampaign(ctx, id)
		if err != nil {
			return started, err
		}
		if ok {
			started++
		}
	}
	return started, nil
}

// startCampaign runs the approved → sending CAS and the recipient build in one
// transaction: a crash leaves either an approved campaign or a sending one with its
// whole list. It reports false when another executor started it first.
func (e *Executor) startCampaign(ctx context.Context, id int64) (bool, error) {
	// The build is one statement; cancelling it half way would only roll back, but a
	// shutdown should not waste the work, so it runs to the end.
	ctx = context.WithoutCancel(ctx)
	var rows int64
	segmented := false // only a segment build runs under statement_timeout
	err := postgres.InTx(ctx, e.pool, func(tx pgx.Tx) error {
		q := e.q.WithTx(tx)
		c, err := q.CampaignStart(ctx, e.now(), id)
		if err != nil {
			return err
		}
		p := store.SendBuildRecipientsParams{CampaignID: c.ID, AccountID: c.AccountID, ListIds: c.ListIds}
		if c.SegmentID != nil {
			segmented = true
			if err := segmentBuild(ctx, q, c.AccountID, *c.SegmentID, e.cfg.SegmentBuildTimeout, &p); err != nil {
				return err
			}
		}
		rows, err = q.SendBuildRecipients(ctx, p)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if segmented && isQueryCanceled(err) {
		// The segment's predicate ran past its bound: retrying would burn the
		// same time on every tick, so the campaign is cancelled and says why in the log.
		_, cerr := e.q.CampaignCancelTimedOut(ctx, id)
		e.log.Error("campaign cancelled: segment build exceeded its time limit", "campaign_id", id,
			"limit", e.cfg.SegmentBuildTimeout.String(), "err", errors.Join(err, cerr))
		return false, nil
	}
	if err != nil {
		return false, err
	}
	e.log.Info("campaign started", "campaign_id", id, "recipients", rows)
	return true, nil
}

// listen holds the process's one LISTEN connection and wakes the scheduler on every
// notification. It reconnects with backoff; after each (re)connect it wakes the
// scheduler once, since notifications sent while disconnected are lost.
func (e *Executor) listen(ctx context.Context) {
	defer e.loops.Done()
	backoff := newStepBackoff(100*time.Millisecond, 10*time.Second)
	for ctx.Err() == nil {
		connected, err := e.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if connected {
			backoff.reset()
		}
		b := backoff.next()
		e.log.Warn("listen connection lost; reconnecting", "err", err, "backoff", b.String())
		if !sleep(ctx, b) {
			return
		}
	}
}

func (e *Executor) listenOnce(ctx context.Context) (bool, error) {
	pool := e.pool
	if e.cfg.ListenPool != nil {
		pool = e.cfg.ListenPool
	}
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	// Hijacked: the connection leaves the pool for good and is closed here.
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{postgres.CampaignChannel}.Sanitize()); err != nil {
		return false, err
	}
	signal(e.wakeSched)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		e.log.Debug("campaign notification", "payload", n.Payload)
		e.notified.add(n.Payload)
		signal(e.wakeSched)
	}
}
