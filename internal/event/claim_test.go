package event

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// TestClaimCapsPerEndpointAndLeases: claims across replicas never have more than
// PerEndpoint deliveries of one endpoint in flight; a claim whose lease ran out is
// claimed again, and the first claimer's late outcome is fenced off.
func TestClaimCapsPerEndpointAndLeases(t *testing.T) {
	t.Parallel()
	e := setup(t)
	busy, _ := e.endpoint("http://127.0.0.1:1/busy", EndpointInput{})
	quiet, _ := e.endpoint("http://127.0.0.1:1/quiet", EndpointInput{})
	for i := range 10 {
		e.emit(SendSent, map[string]any{"send_id": i})
	}
	w := e.worker()
	eventually(t, func() bool {
		_, err := w.fanout(context.Background())
		require.NoError(t, err)
		return len(e.deliveries(busy.ID)) == 10 && len(e.deliveries(quiet.ID)) == 10
	})
	q := store.New(e.pool)
	now := time.Now()
	// A claimer that never registered (no heartbeat): its claims answer to the lease alone.
	claim := func(at time.Time, n int) []store.EventDeliveryClaimRow {
		c := e.worker(func(o *WorkerOptions) { o.Now = func() time.Time { return at }; o.PerEndpoint = 2 })
		rows, err := c.claimRows(context.Background(), n)
		require.NoError(t, err)
		return rows
	}
	first := claim(now, 100)
	require.Len(t, first, 4, "two per endpoint, both endpoints served")
	per := map[int64]int{}
	for _, r := range first {
		per[r.EndpointID]++
	}
	require.Equal(t, map[int64]int{busy.ID: 2, quiet.ID: 2}, per)
	require.Empty(t, claim(now, 100), "another replica finds the cap reached")

	// The leases run out: every claimer is presumed dead, and the rows come round
	// again (after the older pending ones), with their attempt counted.
	var again *store.EventDeliveryClaimRow
	for later := now; again == nil; {
		later = later.Add(2 * time.Minute)
		rows := claim(later, 100)
		require.NotEmpty(t, rows)
		require.LessOrEqual(t, len(rows), 4)
		for _, r := range rows {
			if r.ID == first[0].ID {
				again = &r
			}
		}
	}
	require.EqualValues(t, 2, again.Attempts)
	// The first claimer's outcome now changes nothing.
	n, err := q.EventDeliveryRecord(context.Background(), store.EventDeliveryRecordParams{
		Status: "delivered", ID: first[0].ID, Attempts: first[0].Attempts})
	require.NoError(t, err)
	require.Zero(t, n)
}

// TestRolledBackChangeLeavesNoEvent: an event written in a transaction that rolls
// back never appears, in the pull API or to an endpoint.
func TestRolledBackChangeLeavesNoEvent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rcv := newReceiver(t)
	ep, _ := e.endpoint(rcv.URL, EndpointInput{})
	err := postgres.InTx(context.Background(), e.pool, func(tx pgx.Tx) error {
		require.NoError(t, Emit(context.Background(), tx, e.account, CampaignCancelled, map[string]any{"campaign_id": 1}))
		return context.Canceled
	})
	require.ErrorIs(t, err, context.Canceled)
	e.emit(CampaignSent, map[string]any{"campaign_id": 2})
	e.running().attempts(t, 1)
	got, _ := rcv.received()
	require.Len(t, got, 1)
	evs := e.list()
	require.Len(t, evs, 1)
	require.Equal(t, CampaignSent, evs[0].Type)
	require.Len(t, e.deliveries(ep.ID), 1)
}

// TestCursorWaitsForLateCommits: an event whose transaction commits after a later
// one's is neither skipped nor served out of order: readers hold both back until
// the older transaction ends, then serve them in commit-safe order.
func TestCursorWaitsForLateCommits(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	slow, err := e.pool.Begin(ctx)
	require.NoError(t, err)
	defer slow.Rollback(ctx) //nolint:errcheck // committed below
	require.NoError(t, Emit(ctx, slow, e.account, SendSent, map[string]any{"n": "slow, smaller id"}))
	e.emit(SendSent, map[string]any{"n": "fast, larger id"})
	// A reader paging by id alone would now serve the larger id and skip the
	// smaller one forever. Ours serves nothing yet.
	require.Empty(t, e.list())
	require.NoError(t, slow.Commit(ctx))
	var evs []Event
	eventually(t, func() bool { evs = e.list(); return len(evs) == 2 })
	require.JSONEq(t, `{"n":"slow, smaller id"}`, string(evs[0].Data))
	require.JSONEq(t, `{"n":"fast, larger id"}`, string(evs[1].Data))
	// Resuming after the first, the second follows; after the second, nothing.
	rest, err := e.svc.Events(ctx, e.account, evs[0].Position, nil, 10)
	require.NoError(t, err)
	require.Len(t, rest, 1)
	rest, err = e.svc.Events(ctx, e.account, evs[1].Position, nil, 10)
	require.NoError(t, err)
	require.Empty(t, rest)
}

// TestStreamPassesOverWhatItFiltered: a stream of rare types moves past the events
// its filter passed over (the next read does not read them again), but never past
// a transaction still running: a matching event it commits later is still served.
func TestStreamPassesOverWhatItFiltered(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	only := []string{CampaignSent}
	var at Position
	e.emit(CampaignSent, map[string]any{"n": 1})
	var evs []Event
	eventually(t, func() bool {
		var err error
		evs, at, err = e.svc.StreamEvents(ctx, e.account, Authority{}, at, only, 10)
		require.NoError(t, err)
		return len(evs) == 1
	})
	require.False(t, at.Before(evs[0].Position), "a short page ends at its last event or past it")

	slow, err := e.pool.Begin(ctx)
	require.NoError(t, err)
	defer slow.Rollback(ctx) //nolint:errcheck // committed below
	require.NoError(t, Emit(ctx, slow, e.account, CampaignSent, map[string]any{"n": "late"}))
	for i := range 5 {
		e.emit(SendSent, map[string]any{"n": i})
	}
	evs, at, err = e.svc.StreamEvents(ctx, e.account, Authority{}, at, only, 10)
	require.NoError(t, err)
	require.Empty(t, evs)
	// The running transaction holds the horizon: the stream stays below it (or
	// lower, behind another test's transaction on the cluster).
	var slowXid int64
	require.NoError(t, slow.QueryRow(ctx, `SELECT pg_current_xact_id()::text::bigint`).Scan(&slowXid))
	require.False(t, (Position{Xid: slowXid - 1, ID: math.MaxInt64}).Before(at), "at %v, the running transaction's xid %d", at, slowXid)

	require.NoError(t, slow.Commit(ctx))
	eventually(t, func() bool {
		evs, at, err = e.svc.StreamEvents(ctx, e.account, Authority{}, at, only, 10)
		require.NoError(t, err)
		return len(evs) == 1
	})
	require.JSONEq(t, `{"n":"late"}`, string(evs[0].Data))
	// Once nothing runs, an empty read moves past the five send.sent.
	var sent []Event
	eventually(t, func() bool {
		sent, err = e.svc.Events(ctx, e.account, Position{}, []string{SendSent}, 10)
		require.NoError(t, err)
		return len(sent) == 5
	})
	eventually(t, func() bool {
		evs, at, err = e.svc.StreamEvents(ctx, e.account, Authority{}, at, only, 10)
		require.NoError(t, err)
		return len(evs) == 0 && sent[4].Position.Before(at)
	})
	// Unfiltered, a stream ends at the last event it got.
	all, next, err := e.svc.StreamEvents(ctx, e.account, Authority{}, Position{}, nil, 3)
	require.NoError(t, err)
	require.Len(t, all, 3)
	require.Equal(t, all[2].Position, next)
}

// TestPullPassesOverWhatItFiltered: an empty filtered pull is remembered, so the
// next pull from the same position with the same filter reads on from past the
// events it passed over; never past a transaction still running, and never for
// another account or another filter.
func TestPullPassesOverWhatItFiltered(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	a2, _, err := account.NewService(e.pool).Create(ctx, "events 2")
	require.NoError(t, err)
	only := []string{CampaignSent}
	start := Position{}
	// The other account's campaign.sent commits first, below everything the pulls pass over.
	require.NoError(t, postgres.InTx(ctx, e.pool, func(tx pgx.Tx) error {
		return Emit(ctx, tx, a2.ID, CampaignSent, map[string]any{"n": "other"})
	}))
	slow, err := e.pool.Begin(ctx)
	require.NoError(t, err)
	defer slow.Rollback(ctx) //nolint:errcheck // committed below
	require.NoError(t, Emit(ctx, slow, e.account, CampaignSent, map[string]any{"n": "late"}))
	var sent []Event
	for i := range 5 {
		e.emit(SendSent, map[string]any{"n": i})
	}

	evs, err := e.svc.Events(ctx, e.account, start, only, 10)
	require.NoError(t, err)
	require.Empty(t, evs)
	// The running transaction holds what the pull passed over below it.
	var slowXid int64
	require.NoError(t, slow.QueryRow(ctx, `SELECT pg_current_xact_id()::text::bigint`).Scan(&slowXid))
	key := passKey{account: e.account, after: start, types: typesKey(only)}
	at := e.svc.passed.from(key)
	require.False(t, (Position{Xid: slowXid - 1, ID: math.MaxInt64}).Before(at), "at %v, the running transaction's xid %d", at, slowXid)
	// Another account's pull from the same position with the same filter starts there.
	// (eventually: another test's transaction on the cluster may hold its event back)
	var theirs []Event
	eventually(t, func() bool {
		theirs, err = e.svc.Events(ctx, a2.ID, start, only, 10)
		require.NoError(t, err)
		return len(theirs) == 1
	})
	require.JSONEq(t, `{"n":"other"}`, string(theirs[0].Data))

	require.NoError(t, slow.Commit(ctx))
	eventually(t, func() bool {
		evs, err = e.svc.Events(ctx, e.account, start, only, 10)
		require.NoError(t, err)
		return len(evs) == 1
	})
	require.JSONEq(t, `{"n":"late"}`, string(evs[0].Data))

	// Once nothing runs, an empty pull from the late event is remembered past the five send.sent.
	eventually(t, func() bool {
		sent, err = e.svc.Events(ctx, e.account, start, []string{SendSent}, 10)
		require.NoError(t, err)
		return len(sent) == 5
	})
	late := evs[0].Position
	eventually(t, func() bool {
		evs, err = e.svc.Events(ctx, e.account, late, only, 10)
		require.NoError(t, err)
		require.Empty(t, evs)
		return sent[4].Position.Before(e.svc.passed.from(passKey{account: e.account, after: late, types: typesKey(only)}))
	})
	// The same filter spelled otherwise is the same filter; another filter starts
	// from its own position.
	require.Equal(t, typesKey([]string{CampaignSent, SendFailed, CampaignSent}), typesKey([]string{SendFailed, CampaignSent}))
	require.Equal(t, late, e.svc.passed.from(passKey{account: e.account, after: late, types: typesKey([]string{SendSent})}))
	// A new match after the remembered position is served.
	e.emit(CampaignSent, map[string]any{"n": "next"})
	eventually(t, func() bool {
		evs, err = e.svc.Events(ctx, e.account, late, only, 10)
		require.NoError(t, err)
		return len(evs) == 1
	})
	require.JSONEq(t, `{"n":"next"}`, string(evs[0].Data))
}

// TestPassedOverIsBounded: the memory of filtered pulls never holds more than
// maxPassedOver entries, never moves an entry backwards, and starts a read at the
// caller's own position when it remembers nothing past it.
func TestPassedOverIsBounded(t *testing.T) {
	t.Parallel()
	var p passedOver
	for i := range maxPassedOver + 100 {
		p.remember(passKey{account: int64(i), types: "campaign.sent"}, Position{Xid: 10, ID: 1})
	}
	require.Len(t, p.m, maxPassedOver)
	k := passKey{account: -1, after: Position{Xid: 5, ID: 5}, types: "campaign.sent"}
	require.Equal(t, k.after, p.from(k))
	p.remember(k, Position{Xid: 9, ID: 1})
	p.remember(k, Position{Xid: 7, ID: 1})
	require.Equal(t, Position{Xid: 9, ID: 1}, p.from(k))
	require.Len(t, p.m, maxPassedOver)
}
