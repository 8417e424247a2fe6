// Package complaint guards the spam-complaint rate Gmail and Yahoo hold bulk
// senders to (below 0.3 %, REFERENCE §10.3): per account and route (the sender a
// send went through, or the environment's provider), complaints ÷ deliveries over
// a sliding window, from the complaints the provider webhooks record on the send
// rows. A route above the threshold, with at least MinDelivered deliveries in the
// window to judge by, is tripped: its sending campaigns are paused with the
// reason (a campaign.paused event each), and so is any campaign of that route that
// starts while it stays tripped; a sender.complaint_rate_exceeded event says so
// once. Transactional messages are not held. Resuming a campaign of the route
// by hand clears the trip (the operator decided); the next complaint judges
// again. A route that falls back under the threshold is cleared too.
package complaint

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Guard judges complaint rates. Passes are idempotent: every replica may run them.
type Guard struct {
	Pool *pgxpool.Pool
	// Max is the highest complaint rate allowed (0.003 = 0.3 %); 0 disables.
	Max float64
	// Window is the sliding window the rate is taken over.
	Window time.Duration
	// MinDelivered is the volume below which the guard does not judge.
	MinDelivered int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	Log *slog.Logger

	// since is where the last pass stopped looking for new complaints.
	since time.Time
}

func (g *Guard) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Pass judges every route with a complaint since the last pass (the first pass
// looks back a whole window), then pauses the sending campaigns of tripped
// routes. It returns the campaigns it paused.
func (g *Guard) Pass(ctx context.Context) ([]int64, error) {
	if g.Max <= 0 {
		return nil, nil
	}
	now := g.now()
	windowStart := now.Add(-g.Window)
	since := g.since
	if since.Before(windowStart) {
		since = windowStart
	}
	q := store.New(g.Pool)
	routes, err := q.ComplaintRoutesSince(ctx, since)
	if err != nil {
		return nil, err
	}
	tripped, err := q.ComplaintGuardAll(ctx)
	if err != nil {
		return nil, err
	}
	type route struct{ account, sender int64 }
	judged := map[route]bool{}
	for _, r := range routes {
		judged[route{r.AccountID, r.SenderKey}] = true
		if err := g.judge(ctx, r.AccountID, r.SenderKey, windowStart, now); err != nil {
			return nil, err
		}
	}
	for _, r := range tripped {
		if !judged[route{r.AccountID, r.SenderKey}] {
			if err := g.judge(ctx, r.AccountID, r.SenderKey, windowStart, now); err != nil {
				return nil, err
			}
		}
	}
	g.since = now
	var paused []int64
	err = postgres.InTx(ctx, g.Pool, func(tx pgx.Tx) error {
		rows, err := store.New(tx).ComplaintGuardPauseCampaigns(ctx)
		if err != nil {
			return err
		}
		for _, c := range rows {
			paused = append(paused, c.ID)
			if err := event.Emit(ctx, tx, c.AccountID, event.CampaignPaused, map[string]any{
				"campaign_id": c.ID, "name": c.Name, "status": "paused", "reason": c.Reason}); err != nil {
				return err
			}
		}
		return nil
	})
	if len(paused) > 0 && g.Log != nil {
		g.Log.Warn("complaint rate above the threshold: campaigns paused", "campaigns", paused)
	}
	return paused, err
}

// judge takes one route's rate and trips or clears it.
func (g *Guard) judge(ctx context.Context, accountID, senderKey int64, windowStart, now time.Time) error {
	return postgres.InTx(ctx, g.Pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		r, err := q.ComplaintRate(ctx, store.ComplaintRateParams{AccountID: accountID, SenderKey: senderKey, Since: windowStart})
		if err != nil {
			return err
		}
		if r.Delivered < g.MinDelivered {
			return nil // too few deliveries to judge: neither trips nor clears
		}
		rate := float64(r.Complaints) / float64(r.Delivered)
		if rate <= g.Max {
			_, err := q.ComplaintGuardClear(ctx, store.ComplaintGuardClearParams{AccountID: accountID, SenderKey: senderKey})
			return err
		}
		route := "the environment's provider"
		var sender any
		if senderKey != 0 {
			route, sender = fmt.Sprintf("sender %d", senderKey), senderKey
		}
		reason := fmt.Sprintf("complaint rate %.2f %% (%d complaints in %d deliveries over %s) through %s is above %.2f %%",
			rate*100, r.Complaints, r.Delivered, g.Window, route, g.Max*100)
		t, err := q.ComplaintGuardTrip(ctx, store.ComplaintGuardTripParams{AccountID: accountID, SenderKey: senderKey,
			Delivered: r.Delivered, Complaints: r.Complaints, Rate: rate, Reason: reason, Now: &now})
		if err != nil || !t.Inserted {
			return err
		}
		return event.Emit(ctx, tx, accountID, event.SenderComplaintRateExceeded, map[string]any{"sender_id": sender, "rate": rate,
			"complaints": r.Complaints, "delivered": r.Delivered, "window_seconds": int64(g.Window.Seconds()),
			"threshold": g.Max, "reason": reason})
	})
}

// Run makes a pass every interval until ctx ends, logging failures.
func (g *Guard) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := g.Pass(ctx); err != nil && ctx.Err() == nil && g.Log != nil {
			g.Log.Warn("complaint guard pass", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
