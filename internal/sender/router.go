package sender

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/pacing"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// PauseAfter is how many auth/config failures in a row pause a sender's campaigns.
const PauseAfter = 5

// Router builds and caches the providers of stored senders for the executor and
// test sends, and keeps their health. Safe for concurrent use.
type Router struct {
	svc *Service
	log *slog.Logger

	mu    sync.Mutex
	built map[int64]*routed
}

// routed is one built sender, valid while the row's updated_at is unchanged.
type routed struct {
	updated time.Time
	p       provider.Provider
	rate    float64
	typ     string
	// limits and warm are the sender's pacing (internal/pacing).
	limits map[string]float64
	warm   *pacing.Warmup
	// fails counts consecutive auth/config failures seen by this process.
	fails int
}

// NewRouter returns a router over svc's senders.
func NewRouter(svc *Service, log *slog.Logger) *Router {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Router{svc: svc, log: log, built: map[int64]*routed{}}
}

// Provider returns the provider of sender id of the account, building it (or
// rebuilding it after the sender changed), and its rate.
func (r *Router) Provider(ctx context.Context, accountID, id int64) (provider.Provider, float64, error) {
	p, rate, _, err := r.Route(ctx, accountID, id)
	return p, rate, err
}

// Route is Provider with the sender's type, which the executor records on every
// row it sends through it.
func (r *Router) Route(ctx context.Context, accountID, id int64) (provider.Provider, float64, string, error) {
	row, err := store.New(r.svc.pool).SenderGet(ctx, store.SenderGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return nil, 0, "", postgres.Error(err, "sender")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if b := r.built[id]; b != nil && b.updated.Equal(row.UpdatedAt) {
		return b.p, b.rate, b.typ, nil
	}
	p, err := r.svc.Built(row)
	if err != nil {
		return nil, 0, "", err
	}
	var wrapped provider.Provider = p
	if row.MaxConnections > 0 && row.Type != "smtp" { // smtp's pool size is its cap
		wrapped = capped(p, int(row.MaxConnections))
	}
	if old := r.built[id]; old != nil {
		// In-flight sends may still hold the old one: close it once they are done.
		go old.p.Close() //nolint:errcheck // nothing to do about it
	}
	sn := toSender(row)
	r.built[id] = &routed{updated: row.UpdatedAt, p: wrapped, rate: row.RatePerSecond, typ: row.Type,
		limits: pacing.Limits(sn.DomainLimits), warm: sn.Warmup}
	return wrapped, row.RatePerSecond, row.Type, nil
}

// Pacing is the domain limits (by group) and warm-up schedule of a sender Route
// built last; none for a sender it has not built.
func (r *Router) Pacing(id int64) (map[string]float64, *pacing.Warmup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b := r.built[id]; b != nil {
		return b.limits, b.warm
	}
	return nil, nil
}

// Report keeps a sender's health from one send's outcome: a run of PauseAfter
// auth/config failures pauses the sender's sending campaigns with the reason; a
// recipient the provider refuses for good (Postmark 406) is suppressed.
func (r *Router) Report(ctx context.Context, accountID, id int64, email string, err error) {
	pe, _ := provider.AsError(err)
	if pe != nil && pe.Suppress {
		if _, e := store.New(r.svc.pool).SuppressionAdd(ctx, store.SuppressionAddParams{AccountID: accountID,
			EmailLower: strings.ToLower(email), Reason: "hard_bounce", Source: fmt.Sprintf("sender:%d", id)}); e != nil {
			r.log.Warn("suppress an inactive recipient", "sender", id, "err", e)
		}
	}
	config := pe != nil && pe.Config
	r.mu.Lock()
	b := r.built[id]
	wasFailing := false
	if b != nil {
		wasFailing = b.fails > 0
		if config {
			b.fails++
		} else if err == nil {
			b.fails = 0
		}
	}
	r.mu.Unlock()
	q := store.New(r.svc.pool)
	switch {
	case config:
		reason := fmt.Sprintf("sender %d: %d auth/config failures in a row, last: %v", id, PauseAfter, err)
		row, e := q.SenderRecordAuthFailure(ctx, store.SenderRecordAuthFailureParams{
			FailureLimit: PauseAfter, Reason: reason, AccountID: accountID, ID: id})
		if e != nil {
			r.log.Warn("record a sender failure", "sender", id, "err", e)
			return
		}
		if row.AuthFailures >= PauseAfter {
			ids, e := q.SenderPauseCampaigns(ctx, store.SenderPauseCampaignsParams{
				Reason: *row.PausedReason, AccountID: accountID, SenderID: id})
			if e != nil {
				r.log.Warn("pause a failing sender's campaigns", "sender", id, "err", e)
				return
			}
			if len(ids) > 0 {
				r.log.Warn("sender failing: its campaigns are paused", "sender", id, "campaigns", ids, "reason", *row.PausedReason)
			}
		}
	case err == nil && wasFailing:
		if e := q.SenderRecordSuccess(ctx, store.SenderRecordSuccessParams{AccountID: accountID, ID: id}); e != nil {
			r.log.Warn("record a sender success", "sender", id, "err", e)
		}
	}
}

// Close closes every built provider.
func (r *Router) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, b := range r.built {
		_ = b.p.Close()
		delete(r.built, id)
	}
	return nil
}

// capped limits a provider to n sends at once.
func capped(p provider.Provider, n int) provider.Provider {
	return &cappedProvider{Provider: p, slots: make(chan struct{}, n)}
}

type cappedProvider struct {
	provider.Provider
	slots chan struct{}
}

// Send waits for a free connection slot (Temporary if the context ends first:
// nothing was handed over).
func (c *cappedProvider) Send(ctx context.Context, m provider.Message) (string, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return "", &provider.Error{Class: provider.Temporary, Err: ctx.Err()}
	}
	defer func() { <-c.slots }()
	return c.Provider.Send(ctx, m)
}

// Resolve returns the sender a campaign naming senderID sends through: that
// sender, else the account's default; ok false means the environment's provider.
func (r *Router) Resolve(ctx context.Context, accountID int64, senderID *int64) (id int64, ok bool, err error) {
	row, err := store.New(r.svc.pool).SenderForSend(ctx, store.SenderForSendParams{AccountID: accountID, SenderID: senderID})
	if err != nil {
		err = postgres.Error(err, "sender")
		if apperr.Is(err, apperr.NotFound) {
			return 0, false, nil
		}
		return 0, false, err
	}
	return row.ID, true, nil
}
