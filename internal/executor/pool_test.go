package executor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// poolRoutes is a Senders with pools: swapRoutes' routes and one pool's members,
// which a test changes while the executor runs.
type poolRoutes struct {
	*swapRoutes
	mu      sync.Mutex
	members []PoolMember
}

func (p *poolRoutes) Pool(context.Context, int64, int64) ([]PoolMember, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]PoolMember(nil), p.members...), nil
}

func (p *poolRoutes) hold(id int64, held bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.members {
		if p.members[i].SenderID == id {
			p.members[i].Held = held
		}
	}
}

// poolCampaign is an approved skip campaign of n subscribers of a new account,
// naming a pool of two senders (primary, secondary) through the given providers.
func poolCampaign(t *testing.T, n int, primary, secondary Provider) (fixture, int64, int64, int64, *poolRoutes) {
	t.Helper()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	f.account("other")
	acct := f.account("a")
	f.subscribers(acct, "r", n, "confirmed")
	one := f.sender(acct, "primary", "smtp", false)
	two := f.sender(acct, "secondary", "smtp", false)
	pl := testfactory.New(pool).SenderPool(t, acct, "relays", one, two)
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Second))
	f.exec(`UPDATE campaigns SET pool_id = $1 WHERE id = $2`, pl, c)
	r := &poolRoutes{swapRoutes: &swapRoutes{byID: map[int64]Route{one: {Provider: primary, Kind: "smtp"},
		two: {Provider: secondary, Kind: "smtp"}}}, members: []PoolMember{{SenderID: one}, {SenderID: two}}}
	return f, c, one, two, r
}

var (
	errRefused = &provider.Error{Class: provider.Temporary, RouteDown: true, Err: errors.New("smtp connect: connection refused")}
	errLostDot = &provider.Error{Class: provider.Ambiguous, Err: errors.New("smtp end of data: i/o timeout")}
)

// TestPoolFailsOverOnlyRowsNotAccepted: the primary of a pool times out after
// DATA for its first recipients (in doubt: it may have queued them), then dies
// (connection refused). The refused rows move to the secondary, uncharged, and
// are sent there once each; the in-doubt rows never change route: unknown under
// skip, never a second copy through the secondary. Every row records the route
// it was sent through.
func TestPoolFailsOverOnlyRowsNotAccepted(t *testing.T) {
	t.Parallel()
	const n, inDoubt = 120, 6
	primary, secondary := newFake(false), newFake(false)
	var calls atomic.Int64
	var mu sync.Mutex
	doubtful := map[string]bool{} // the primary may have queued these
	primary.fail = func(m provider.Message, _ int) error {
		if calls.Add(1) <= inDoubt {
			mu.Lock()
			doubtful[m.JobID] = true
			mu.Unlock()
			return errLostDot
		}
		return errRefused
	}
	f, c, one, two, r := poolCampaign(t, n, primary, secondary)
	env := newFake(true)
	e, err := New(f.pool, env, Config{Tick: 50 * time.Millisecond, Workers: 4, BatchSize: 10,
		Poll: 20 * time.Millisecond, Senders: r, PoolFailback: time.Hour, PrefetchNonIdempotent: true}, nil, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		// What reached recipients: the secondary's copies (the primary accepted
		// none; its lost answers are the unknown rows, which may or may not have).
		invariant.Require(t, f.pool, invariant.Options{KeptCounters: true, Delivered: secondary.delivered()})
	})
	e.signals.finished.Init()
	runUntil(t, e)
	waitSent(t, f, e, c)

	pc, pa, _ := primary.snapshot()
	_, sa, _ := secondary.snapshot()
	require.Empty(t, pa, "the primary accepted nothing")
	require.Len(t, doubtful, inDoubt)
	for job := range doubtful {
		require.Zero(t, sa[job], "%s, in doubt at the primary, went to the secondary too", job)
	}
	for job, k := range pc {
		if !doubtful[job] {
			require.Equal(t, 1, sa[job], "%s, refused by the primary (%d calls), not sent once by the secondary", job, k)
		}
	}
	for job, k := range sa {
		require.Equal(t, 1, k, "%s sent twice", job)
	}
	got := f.counts(c)
	require.Equal(t, inDoubt, got["unknown"], "%v", got)
	require.Equal(t, n-inDoubt, got["sent"], "%v", got)
	require.Len(t, sa, n-inDoubt)
	require.Zero(t, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'sent'
		AND via_sender_id IS DISTINCT FROM $2`, c, two), "a sent row records the secondary")
	require.EqualValues(t, inDoubt, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'unknown'
		AND via_sender_id = $2`, c, one), "an in-doubt row keeps the primary's route")
	require.Zero(t, f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'sent' AND attempts <> 1`, c),
		"a row the primary refused was handed back uncharged")
	envCalls, _, _ := env.snapshot()
	require.Empty(t, envCalls, "nothing went through the environment's provider")
}

// TestPoolRouteSkipsHeldAndRefusingSenders: the route is the first member neither
// held (paused, complaint guard) nor refusing; a refusal passes over a sender for
// PoolFailback, after which the pool goes back to it; with no usable member the
// campaign waits out of the deal, its rows untouched.
func TestPoolRouteSkipsHeldAndRefusingSenders(t *testing.T) {
	t.Parallel()
	primary, secondary := newFake(false), newFake(false)
	f, c, one, two, r := poolCampaign(t, 3, primary, secondary)
	e := newExecutor(t, f.pool, newFake(true), Config{Senders: r, PoolFailback: 300 * time.Millisecond})
	f.start(c)
	ctx := context.Background()
	d := e.newDealer()
	current := func() *route {
		t.Helper()
		require.NoError(t, e.refresh(ctx, d))
		return e.routeOf(d.byID[c])
	}
	rt := current()
	require.Equal(t, one, *rt.senderID, "the primary first")
	require.Equal(t, "0", rt.positionLabel())

	r.hold(one, true) // paused after auth failures, or its complaint guard tripped
	rt = current()
	require.Equal(t, two, *rt.senderID)
	require.Equal(t, "1", rt.positionLabel())
	r.hold(one, false)
	require.Equal(t, one, *current().senderID, "back to the primary once it is released")

	require.True(t, e.failover(current(), errRefused), "the secondary can take the row")
	require.False(t, e.failover(current(), errLostDot), "an ambiguous answer never fails over")
	require.False(t, e.failover(current(), temporary("451 greylisted")), "a recipient's refusal is no route's")
	require.Equal(t, two, *current().senderID, "the refusing primary is passed over")
	require.False(t, e.failover(current(), errRefused), "no third member to go to")
	require.Equal(t, one, *current().senderID, "every member refuses: the first anyway, its rows retried as through one sender")
	require.NoError(t, d.byID[c].routeErr)
	r.hold(one, true)
	require.Equal(t, two, *current().senderID, "the refusing secondary rather than the held primary")
	r.hold(two, true)
	require.ErrorContains(t, func() error { current(); return d.byID[c].routeErr }(), "no usable sender")
	r.hold(one, false)
	r.hold(two, false)
	e.refused.mu.Lock()
	e.refused.until = nil // the refusals forgotten
	e.refused.mu.Unlock()
	e.refused.trip(one, time.Now().Add(300*time.Millisecond))
	require.Equal(t, two, *current().senderID, "the refusing primary is passed over")
	time.Sleep(350 * time.Millisecond)
	require.Equal(t, one, *current().senderID, "after PoolFailback the pool tries its primary again")
	require.NoError(t, d.byID[c].routeErr)
	settle(t, e)
}
