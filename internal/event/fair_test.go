package event

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// hangingReceiver holds every request open until the test ends, so what a worker
// claimed stays in flight; it counts the requests per path.
type hangingReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	byPath map[string]int
	total  int
}

func newHangingReceiver(t *testing.T) *hangingReceiver {
	release := make(chan struct{})
	h := &hangingReceiver{byPath: map[string]int{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.byPath[r.URL.Path]++
		h.total++
		h.mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(func() { close(release); h.Close() })
	return h
}

func (h *hangingReceiver) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// TestClaimServesEveryAccount: account A has ten backlogged endpoints, account B
// one delivery to its one endpoint; the first claim, four slots wide, takes B's
// delivery among them instead of filling every slot from A's backlog.
func TestClaimServesEveryAccount(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	rcv := newHangingReceiver(t)
	for i := range 10 {
		e.endpoint(rcv.URL+"/a"+itoa(int64(i)), EndpointInput{})
	}
	for i := range 5 {
		e.emit(SendSent, map[string]any{"send_id": i})
	}
	b, _, err := account.NewService(e.pool).Create(ctx, "tenant b")
	require.NoError(t, err)
	url := rcv.URL + "/b"
	epB, _, err := e.svc.Create(ctx, b.ID, EndpointInput{URL: &url})
	require.NoError(t, err)
	w := e.worker(func(o *WorkerOptions) { o.Concurrency = 4; o.PerEndpoint = 4 })
	require.NoError(t, emitFor(ctx, e, b.ID))
	eventually(t, func() bool {
		_, err := w.fanout(ctx)
		require.NoError(t, err)
		var n int
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM event_deliveries`).Scan(&n))
		return n == 51
	})
	require.NoError(t, w.claim(ctx))
	var status string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT status FROM event_deliveries WHERE endpoint_id = $1`, epB.ID).Scan(&status))
	require.Equal(t, "delivering", status, "B's delivery is claimed in the first claim")
}

// TestDeadExecutorsDeliveriesAreFree: a worker claims an endpoint's four slots and
// its process dies (its heartbeat stops; the requests hang). Three heartbeats
// later, long before the 30 s lease runs out, another worker claims them again.
func TestDeadExecutorsDeliveriesAreFree(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	rcv := newHangingReceiver(t)
	e.endpoint(rcv.URL+"/x", EndpointInput{})
	for i := range 6 {
		e.emit(SendSent, map[string]any{"send_id": i})
	}
	var mu sync.Mutex
	var now time.Time // set once the deliveries exist (their next_attempt_at is the database's now())
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	opts := func(o *WorkerOptions) { o.Now = clock; o.Concurrency = 8; o.PerEndpoint = 4 }
	dying, live := e.worker(opts), e.worker(opts)
	eventually(t, func() bool {
		_, err := dying.fanout(ctx)
		require.NoError(t, err)
		var n int
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM event_deliveries`).Scan(&n))
		return n == 6
	})
	mu.Lock()
	now = time.Now().Add(time.Second)
	mu.Unlock()
	require.NoError(t, dying.claim(ctx))
	require.NoError(t, live.claim(ctx))
	eventually(t, func() bool { return rcv.count() == 4 })
	mu.Lock()
	now = now.Add(10 * time.Second) // the dying worker beats no more
	mu.Unlock()
	require.NoError(t, live.claim(ctx))
	eventually(t, func() bool { return rcv.count() == 8 })
}

// TestRetryAfterDoesNotAdvanceTheSchedule: a receiver answers 503 with
// Retry-After ten times, then 500 once: the next wait is the schedule's first
// step (5 s), not the tenth (hours).
func TestRetryAfterDoesNotAdvanceTheSchedule(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rcv := newReceiver(t)
	for range 10 {
		rcv.statuses = append(rcv.statuses, http.StatusServiceUnavailable)
	}
	rcv.statuses = append(rcv.statuses, http.StatusInternalServerError)
	rcv.header.Set("Retry-After", "1")
	ep, _ := e.endpoint(rcv.URL, EndpointInput{})
	e.emit(SendSent, map[string]any{"send_id": 1})
	now := time.Now()
	w := e.worker(func(o *WorkerOptions) { o.Now = func() time.Time { return now }; o.Schedule = Schedule })
	eventually(t, func() bool {
		now = now.Add(2 * time.Second)
		w.round(t)
		got, _ := rcv.received()
		return len(got) == 11
	})
	ds := e.deliveries(ep.ID)
	require.Len(t, ds, 1)
	require.Equal(t, 500, *ds[0].StatusCode)
	wait := ds[0].NextAttemptAt.Sub(now)
	require.LessOrEqual(t, wait, 6*time.Second, "the schedule's first step (5 s ±20 %%), got %s", wait)
	require.GreaterOrEqual(t, wait, 4*time.Second)
}

// TestCrashReclaimDoesNotAdvanceTheSchedule: a delivery whose claimer died (its
// lease ran out) is claimed again; that claim's 500 waits the schedule's first
// step, as if the lost attempt never happened.
func TestCrashReclaimDoesNotAdvanceTheSchedule(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	rcv.statuses = []int{http.StatusInternalServerError}
	ep, _ := e.endpoint(rcv.URL, EndpointInput{})
	e.emit(SendSent, map[string]any{"send_id": 1})
	var now time.Time
	w := e.worker(func(o *WorkerOptions) { o.Now = func() time.Time { return now }; o.Schedule = Schedule })
	eventually(t, func() bool {
		_, err := w.fanout(ctx)
		require.NoError(t, err)
		return len(e.deliveries(ep.ID)) == 1
	})
	now = time.Now().Add(time.Second)
	lost, err := w.claimRows(ctx, 1) // the claimer dies before it posts
	require.NoError(t, err)
	require.Len(t, lost, 1)
	now = now.Add(2 * Timeout) // the lease runs out
	w.round(t)
	got, _ := rcv.received()
	require.Len(t, got, 1)
	ds := e.deliveries(ep.ID)
	require.Equal(t, 2, ds[0].Attempts)
	wait := ds[0].NextAttemptAt.Sub(now)
	require.LessOrEqual(t, wait, 6*time.Second, "the schedule's first step (5 s ±20 %%), got %s", wait)
}

// TestEventsOfADeletedAccountGo: deleting an account deletes its events, rows and
// batches; another account's stay.
func TestEventsOfADeletedAccountGo(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	other, _, err := account.NewService(e.pool).Create(ctx, "stays")
	require.NoError(t, err)
	e.emit(SendSent, map[string]any{"send_id": 1})
	require.NoError(t, emitFor(ctx, e, other.ID))
	require.NoError(t, postgres.InTx(ctx, e.pool, func(tx pgx.Tx) error {
		writeBatch(ctx, t, tx, e.account, "sent", "failed")
		writeBatch(ctx, t, tx, other.ID, "sent")
		return nil
	}))
	_, err = e.pool.Exec(ctx, `DELETE FROM accounts WHERE id = $1`, e.account)
	require.NoError(t, err)
	var gone, kept int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE account_id = $1), count(*) FILTER (WHERE account_id = $2) FROM all_events`,
		e.account, other.ID).Scan(&gone, &kept))
	require.Zero(t, gone, "the deleted account's events")
	require.Equal(t, 2, kept)
}

// emitFor commits one event of another account.
func emitFor(ctx context.Context, e *env, accountID int64) error {
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	if err := Emit(ctx, tx, accountID, SendSent, map[string]any{"send_id": 1000}); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// TestClaimCapHoldsAcrossClaimers: while one replica's claim is still in its
// transaction, another claims too; together they never put more than PerEndpoint
// of one endpoint in flight, and the second serves the other endpoint meanwhile.
func TestClaimCapHoldsAcrossClaimers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	ep, _ := e.endpoint("http://127.0.0.1:1/x", EndpointInput{})
	other, _ := e.endpoint("http://127.0.0.1:1/y", EndpointInput{})
	for i := range 10 {
		e.emit(SendSent, map[string]any{"send_id": i})
	}
	w := e.worker(func(o *WorkerOptions) { o.PerEndpoint = 4 })
	eventually(t, func() bool {
		_, err := w.fanout(ctx)
		require.NoError(t, err)
		return len(e.deliveries(ep.ID)) == 10 && len(e.deliveries(other.ID)) == 10
	})
	inFlight := func() map[int64]int {
		per := map[int64]int{}
		rows, err := e.pool.Query(ctx, `SELECT endpoint_id FROM event_deliveries WHERE status = 'delivering'`)
		require.NoError(t, err)
		for rows.Next() {
			var id int64
			require.NoError(t, rows.Scan(&id))
			per[id]++
		}
		require.NoError(t, rows.Err())
		return per
	}
	// The first claimer stops between its two statements and inside its transaction.
	tx1, err := e.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx1.Rollback(ctx) //nolint:errcheck // committed below
	q1 := store.New(tx1)
	eps, err := q1.EventClaimEndpoints(ctx, store.EventClaimEndpointsParams{N: 1, PerEndpoint: 4, DeadAfter: interval(time.Minute)})
	require.NoError(t, err)
	require.Equal(t, []int64{ep.ID}, eps, "the endpoint that waited longest (the lower id, on a tie)")
	first, err := q1.EventDeliveryClaim(ctx, store.EventDeliveryClaimParams{Lease: interval(time.Minute), PerEndpoint: 4,
		DeadAfter: interval(time.Minute), EndpointIds: eps, N: 100})
	require.NoError(t, err)
	require.Len(t, first, 4)
	second, err := w.claimRows(ctx, 100)
	require.NoError(t, err)
	require.Len(t, second, 4)
	for _, r := range second {
		require.Equal(t, other.ID, r.EndpointID, "the locked endpoint is skipped")
	}
	require.NoError(t, tx1.Commit(ctx))
	third, err := w.claimRows(ctx, 100)
	require.NoError(t, err)
	require.Empty(t, third, "both endpoints are at their cap")
	require.Equal(t, map[int64]int{ep.ID: 4, other.ID: 4}, inFlight())
}
