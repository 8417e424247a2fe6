package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	campaignsvc "github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// schedule starts due campaigns every Tick and whenever a NOTIFY (approve, resume,
// reschedule) or a reconnect of the listener wakes it.
func (e *Executor) schedule(ctx context.Context) {
	defer e.loops.Done()
	for {
		_, err := e.startDue(ctx)
		if err != nil && ctx.Err() == nil {
			e.log.Warn("start due campaigns", "err", err)
		}
		if aerr := e.abRound(ctx); aerr != nil && ctx.Err() == nil {
			e.log.Warn("a/b tests", "err", aerr)
			err = errors.Join(err, aerr)
		}
		// Resumed campaigns need no start, but the dispatcher must see them.
		signal(e.wakeRefresh)
		wait := e.untilNextDue(ctx)
		if err != nil {
			// A campaign that failed for a reason that may pass is still due: retry
			// it soon, not in a tight loop.
			wait = max(wait, min(e.cfg.Tick, scheduleRetry))
		}
		timer := e.clk.NewTimer(wait)
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

// scheduleRetry is the shortest wait after a round in which a start failed.
const scheduleRetry = time.Second

// untilNextDue is how long the scheduler may sleep: until the next approved
// campaign falls due, at most Tick (the fallback poll), at least 10ms. While a
// campaign is being built it is at most Heartbeat: a build whose executor died is
// taken over soon after the dead executor is forgotten, which no NOTIFY announces.
func (e *Executor) untilNextDue(ctx context.Context) time.Duration {
	wait := e.cfg.Tick
	if building, err := e.q.CampaignBuildAny(ctx); err == nil && building {
		wait = min(wait, e.cfg.Heartbeat)
	}
	wait = e.untilWinnerDue(ctx, wait)
	dueIn, err := e.q.CampaignNextDue(ctx, e.clk.DB())
	if err != nil {
		return wait
	}
	return min(max(time.Duration(dueIn)*time.Microsecond, 10*time.Millisecond), wait)
}

// startDue starts every approved campaign whose time has come, and the builds
// whose builder stopped, and returns how many this executor started (others may
// have won some). One campaign never holds back the others: a campaign that
// cannot start is failed with its reason, and any other error is returned after
// the rest were tried (the campaign is tried again next round).
func (e *Executor) startDue(ctx context.Context) (int, error) {
	ids, err := e.q.CampaignListDue(ctx, e.clk.DB())
	if err != nil {
		return 0, err
	}
	resume, err := e.q.CampaignListBuildsToResume(ctx, e.builderID())
	if err != nil {
		return 0, err
	}
	started := 0
	var errs []error
	for _, id := range append(ids, resume...) {
		if ctx.Err() != nil {
			return started, ctx.Err()
		}
		ok, err := e.startCampaign(ctx, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("campaign %d: %w", id, err))
			continue
		}
		if ok {
			started++
		}
	}
	return started, errors.Join(errs...)
}

// builderID is the executor id that marks this process's builds; nil before it
// registered (such a build is anyone's to take over, which only repeats work).
func (e *Executor) builderID() *int64 {
	if id := e.live.ID(); id != 0 {
		return &id
	}
	return nil
}

// startCampaign starts one campaign in three steps, none of which holds a
// transaction open for the length of the build (event readers of every account
// wait for the oldest running transaction id): approved → building (a CAS), the
// build (read-only reads, short inserts), building → sending (a CAS with the
// campaign.started event). Only a sending campaign is claimed or finished, so a
// crash mid-build never sends a partial list as if whole: the building campaign is
// taken over and built again, idempotently. It reports false when another executor
// started (or is building) it, or the campaign was cancelled meanwhile, or it
// could not start and was failed.
func (e *Executor) startCampaign(ctx context.Context, id int64) (bool, error) {
	owner := e.builderID()
	c, err := e.q.CampaignBuildBegin(ctx, store.CampaignBuildBeginParams{ID: id, ExecutorID: owner, Now: e.clk.DB()})
	if postgres.NoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	b, err := buildList(ctx, e.pool, c, owner, e.clk, e.clk.DB(), e.cfg.SegmentBuildTimeout)
	if errors.Is(err, errBuildLost) {
		return false, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err() // the build is taken over once this executor deregisters
		}
		reason, ok := cannotStart(err, e.cfg.SegmentBuildTimeout)
		if !ok {
			return false, err
		}
		// Retrying would fail the same way on every round: the campaign fails
		// alone, with its reason on the campaign and in a campaign.failed event.
		// What its build queued goes afterwards, in bounded batches; what a crash
		// leaves of it the maintenance deletes (sweepFailed).
		f, ferr := e.q.CampaignFail(ctx, store.CampaignFailParams{ID: id, ExecutorID: owner, Reason: reason, Now: e.clk.DB()})
		if ferr != nil && !postgres.NoRows(ferr) {
			return false, errors.Join(err, ferr)
		}
		if ferr == nil {
			if _, derr := campaignsvc.DeleteFailed(ctx, e.q, f.AccountID, f.ID); derr != nil {
				e.log.Warn("delete a failed campaign's rows; maintenance retries", "campaign_id", id, "err", derr)
			}
		}
		e.log.Error("campaign failed: it cannot start", "campaign_id", id, "account_id", c.AccountID,
			"reason", reason, "err", err)
		return false, nil
	}
	ok, err := buildDone(ctx, e.q, c, owner, e.clk.DB(), b)
	if !ok || err != nil {
		return false, err
	}
	e.log.Info("campaign started", "campaign_id", id, "recipients", b.Rows)
	e.signals.started.Signal(id)
	return true, nil
}

// listen hears campaign notifications on the process's LISTEN connection
// (Config.Listener, shared with the API) and wakes the scheduler on each, and
// after each (re)connect, since notifications sent while disconnected are lost.
// Without a shared Listener the executor runs one of its own until ctx ends.
func (e *Executor) listen(ctx context.Context) {
	notify := func(payload string) {
		e.log.Debug("campaign notification", "payload", payload)
		e.notified.add(payload)
		signal(e.wakeSched)
	}
	connected := func() { signal(e.wakeSched) }
	if e.cfg.Listener != nil {
		e.cfg.Listener.Handle(postgres.CampaignChannel, notify, connected)
		return
	}
	pool := e.pool
	if e.cfg.ListenPool != nil {
		pool = e.cfg.ListenPool
	}
	l := postgres.NewListener(pool, e.log)
	l.Handle(postgres.CampaignChannel, notify, connected)
	e.loops.Add(1)
	go func() { defer e.loops.Done(); l.Run(ctx) }()
}
