package event

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/postgres"
)

// env is a database with one account, a Service that lets endpoints point at this
// machine, and a worker built by worker().
type env struct {
	t       *testing.T
	pool    *pgxpool.Pool
	account int64
	svc     *Service
}

func setup(t *testing.T) *env {
	t.Helper()
	pool := dbtest.New(t)
	a, _, err := account.NewService(pool).Create(context.Background(), "events")
	require.NoError(t, err)
	return &env{t: t, pool: pool, account: a.ID, svc: NewService(pool, Guard{AllowHTTP: true, AllowPrivate: true})}
}

func (e *env) worker(mutate ...func(*WorkerOptions)) *Worker {
	o := WorkerOptions{Guard: Guard{AllowHTTP: true, AllowPrivate: true},
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Schedule: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}}
	for _, m := range mutate {
		m(&o)
	}
	return NewWorker(e.pool, o)
}

// running is a worker that runs (Run, polling every 10 ms) until the test ends,
// its attempts signalled: the test waits on them (attempts) instead of stepping
// the worker in a polling loop until an event becomes visible.
func (e *env) running(mutate ...func(*WorkerOptions)) *Worker {
	e.t.Helper()
	w := e.worker(append([]func(*WorkerOptions){func(o *WorkerOptions) { o.Poll = 10 * time.Millisecond }}, mutate...)...)
	w.signals.recorded.Init()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	e.t.Cleanup(func() { cancel(); <-done })
	return w
}

// attempts waits for the next n recorded attempts of a running worker and
// returns them in order.
func (w *Worker) attempts(t *testing.T, n int) []attemptSignal {
	t.Helper()
	got := make([]attemptSignal, 0, n)
	for range n {
		got = append(got, w.signals.recorded.Wait(t))
	}
	return got
}

// emit commits one event of the env's account.
func (e *env) emit(typ string, data any) {
	e.t.Helper()
	require.NoError(e.t, postgres.InTx(context.Background(), e.pool, func(tx pgx.Tx) error {
		return Emit(context.Background(), tx, e.account, typ, data)
	}))
}

func (e *env) endpoint(url string, in EndpointInput) (Endpoint, string) {
	e.t.Helper()
	in.URL = &url
	ep, secret, err := e.svc.Create(context.Background(), e.account, in)
	require.NoError(e.t, err)
	return ep, secret
}

// round runs one fan-out and one claim, and waits for the deliveries it started.
func (w *Worker) round(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	_, err := w.fanout(ctx)
	require.NoError(t, err)
	require.NoError(t, w.claim(ctx))
	w.wg.Wait()
}

// receiver is a real HTTP receiver that verifies every request with the Standard
// Webhooks reference library and answers with the status its script gives.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	secrets  []string
	got      []received
	bad      []string
	statuses []int // answered in turn; past the end, 204
	header   http.Header
}

type received struct {
	ID   string
	Sig  string
	Body []byte
}

func newReceiver(t *testing.T, secrets ...string) *receiver {
	r := &receiver{secrets: secrets, header: http.Header{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			r.bad = append(r.bad, err.Error())
			continue
		}
		if err := wh.Verify(body, req.Header); err != nil {
			r.bad = append(r.bad, s+": "+err.Error())
		}
	}
	r.got = append(r.got, received{ID: req.Header.Get("webhook-id"), Sig: req.Header.Get("webhook-signature"), Body: body})
	status := http.StatusNoContent
	if len(r.statuses) > 0 {
		status, r.statuses = r.statuses[0], r.statuses[1:]
	}
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
}

func (r *receiver) received() ([]received, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...), append([]string(nil), r.bad...)
}

// payloadOf decodes a single-event body.
func payloadOf(t *testing.T, b []byte) Event {
	t.Helper()
	var e Event
	require.NoError(t, json.Unmarshal(b, &e))
	return e
}

// deliveries returns the endpoint's log.
func (e *env) deliveries(endpointID int64) []Delivery {
	e.t.Helper()
	ds, err := e.svc.Deliveries(context.Background(), e.account, endpointID, 0, 500)
	require.NoError(e.t, err)
	return ds
}

// list returns the account's visible events of the given types.
func (e *env) list(types ...string) []Event {
	e.t.Helper()
	evs, err := e.svc.Events(context.Background(), e.account, Position{}, types, 500)
	require.NoError(e.t, err)
	return evs
}

// eventually polls cond: events become visible only once every older
// transaction on the (shared) test server has ended.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 20*time.Second, 10*time.Millisecond)
}
