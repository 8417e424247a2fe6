package event

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/backoff"
	"github.com/sendonce/sendonce/internal/clock"
	"github.com/sendonce/sendonce/internal/liveness"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testsignal"
)

// Schedule is the wait after each failed attempt (Standard Webhooks' example):
// about three days in all; the attempt after the last wait is the last one.
var Schedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// lease is how long a claimed delivery is the claimer's: a worker alive but
// frozen, or one that never registered, loses it after this.
const lease = 2 * Timeout

// WorkerOptions configure the delivery worker.
type WorkerOptions struct {
	Guard Guard
	// Concurrency is how many deliveries this process makes at once (default 8);
	// PerEndpoint caps those in flight to one endpoint across replicas (default 4).
	Concurrency int
	PerEndpoint int
	// Heartbeat is how often the worker refreshes its row in the executors table
	// (default 2s); a worker silent for three heartbeats is dead, and the
	// deliveries it held are claimed again at once rather than when their lease ends.
	Heartbeat time.Duration
	// Poll is how often the worker looks for new events and due deliveries (default 500ms).
	Poll time.Duration
	// Retention is how long events and deliveries are kept (default 30 days).
	Retention time.Duration
	// DisableAfter disables an endpoint that has failed without a success for this long (default 72h).
	DisableAfter time.Duration
	// Schedule overrides the retry schedule (tests).
	Schedule []time.Duration
	Registry prometheus.Registerer
	Logger   *slog.Logger
	// Now injects the date (tests); nil: the wall clock. The worker's time is
	// read through its clock.Clock only.
	Now func() time.Time
}

// Worker fans events out to endpoints and delivers them. Any number of replicas
// may run one against the same database.
type Worker struct {
	pool *pgxpool.Pool
	opts WorkerOptions
	// clk is the worker's time (internal/clock): the date opts.Now injects, the
	// pace of its poll and heartbeat.
	clk     clock.Clock
	client  *http.Client
	metrics *metrics
	log     *slog.Logger

	live *liveness.Registration
	// lost: a claim may have committed unseen (releaseLost); the claim loop's only.
	lost liveness.LostClaims

	mu   sync.Mutex
	free int
	wg   sync.WaitGroup
	// done is signalled when a delivery finishes, so the loop claims again at once.
	done chan struct{}
	// signals are the moments tests wait on; never initialised in production.
	signals workerSignals
}

// workerSignals are the moments of the worker its tests wait on instead of
// driving its steps in a polling loop (internal/testsignal).
type workerSignals struct {
	// recorded: a delivery attempt's outcome was written (deliver).
	recorded testsignal.Signal[attemptSignal]
}

// attemptSignal is one recorded attempt: the delivery and the status it left
// (delivered, pending, failed).
type attemptSignal struct {
	delivery int64
	status   string
}

// NewWorker returns a Worker on pool.
func NewWorker(pool *pgxpool.Pool, opts WorkerOptions) *Worker {
	if opts.Concurrency < 1 {
		opts.Concurrency = 8
	}
	if opts.PerEndpoint < 1 {
		opts.PerEndpoint = 4
	}
	if opts.Poll <= 0 {
		opts.Poll = 500 * time.Millisecond
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 2 * time.Second
	}
	if opts.Retention <= 0 {
		opts.Retention = 30 * 24 * time.Hour
	}
	if opts.DisableAfter <= 0 {
		opts.DisableAfter = 72 * time.Hour
	}
	if len(opts.Schedule) == 0 {
		opts.Schedule = Schedule
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	clk := clock.New(opts.Now, 0)
	// The liveness statements use an injected date instead of the database's now().
	live := liveness.New(store.New(pool), liveness.Options{Heartbeat: opts.Heartbeat, Clock: clk,
		Logger: opts.Logger, Name: "event worker"})
	return &Worker{pool: pool, opts: opts, clk: clk, client: opts.Guard.newClient(), metrics: newMetrics(opts.Registry),
		log: opts.Logger, free: opts.Concurrency, done: make(chan struct{}, 1), live: live}
}

// Run fans out and delivers until ctx ends, then waits for the deliveries in flight
// (each bounded by Timeout) and returns. It looks for new events every Poll, and
// claims again as soon as a delivery finishes, so an endpoint's throughput is bound
// by its concurrency cap and its latency, not by the poll.
func (w *Worker) Run(ctx context.Context) {
	defer w.deregister()
	beats := make(chan struct{})
	hctx, stopBeats := context.WithCancel(context.WithoutCancel(ctx))
	go func() { defer close(beats); w.heartbeat(hctx) }()
	// The row beats until the deliveries in flight have settled, then goes.
	defer func() { stopBeats(); <-beats }()
	defer w.wg.Wait()
	tick := w.clk.NewTicker(w.opts.Poll)
	defer tick.Stop()
	var lastMaintain clock.Instant
	fanout := true
	for {
		if fanout {
			if _, err := w.fanout(ctx); err != nil && ctx.Err() == nil {
				w.log.Warn("event fan-out", "err", err)
			}
		}
		if err := w.claim(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("event delivery claim", "err", err)
		}
		if w.clk.Since(lastMaintain) > 15*time.Second {
			lastMaintain = w.clk.Instant()
			w.maintain(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			fanout = true
		case <-w.done:
			fanout = false
		}
	}
}

// claim takes as many due deliveries as there are free slots and starts them. It
// first refreshes this worker's heartbeat when one is due, so the deliveries it
// claims carry a live executor id, and hands back the deliveries of a claim whose
// answer was lost, holding the claims until it can.
func (w *Worker) claim(ctx context.Context) error {
	w.live.BeatIfDue(ctx)
	if ok, err := w.releaseLost(ctx); !ok {
		return err
	}
	for {
		w.mu.Lock()
		n := w.free
		w.mu.Unlock()
		if n == 0 {
			return nil
		}
		// Claimed under WithoutCancel: a shutdown must not strand rows it locked.
		claimedAt := w.clk.Now()
		rows, err := w.claimRows(context.WithoutCancel(ctx), n)
		if err != nil {
			return w.lost.Failed(err, claimedAt)
		}
		w.mu.Lock()
		w.free -= len(rows)
		w.mu.Unlock()
		for _, r := range rows {
			w.wg.Add(1)
			go func() {
				defer w.wg.Done()
				w.deliver(r)
				w.mu.Lock()
				w.free++
				w.mu.Unlock()
				select {
				case w.done <- struct{}{}:
				default: // a wake-up is pending already
				}
			}()
		}
		if len(rows) < n || ctx.Err() != nil {
			return nil
		}
	}
}

// claimRows claims up to n due deliveries in one transaction of two statements:
// the endpoints to serve, locked (EventClaimEndpoints), then their deliveries
// (EventDeliveryClaim), which sees every claim committed on those endpoints. The
// transaction is ended by hand: an error of its COMMIT says the claim may have
// committed (commitSent), whatever pgx makes of the connection afterwards.
func (w *Worker) claimRows(ctx context.Context, n int) ([]store.EventDeliveryClaimRow, error) {
	now := w.live.SQLNow()
	self, judge := w.live.Self(), w.live.MayJudge()
	dead := interval(w.live.DeadAfter())
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after a commit, a no-op
	q := store.New(tx)
	eps, err := q.EventClaimEndpoints(ctx, store.EventClaimEndpointsParams{N: int32(n), Now: now,
		CheckLiveness: judge, Self: self, DeadAfter: dead, PerEndpoint: int32(w.opts.PerEndpoint)})
	if err != nil || len(eps) == 0 {
		return nil, err
	}
	rows, err := q.EventDeliveryClaim(ctx, store.EventDeliveryClaimParams{Self: self, Now: now,
		Lease: interval(lease), PerEndpoint: int32(w.opts.PerEndpoint), CheckLiveness: judge,
		DeadAfter: dead, EndpointIds: eps, N: int32(n)})
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, commitSent{err}
	}
	return rows, nil
}

// commitSent marks an error of a COMMIT that was handed to the connection: the
// transaction may have committed, even where pgx calls the error safe to retry
// (a connection it closed under the COMMIT answers "conn closed"). Never safe to
// retry, so the claim's outcome counts as unknown (liveness.OutcomeUnknown).
type commitSent struct{ err error }

func (e commitSent) Error() string     { return "commit: " + e.err.Error() }
func (e commitSent) Unwrap() error     { return e.err }
func (e commitSent) SafeToRetry() bool { return false }

// maintain applies retention and refreshes the backlog gauge.
func (w *Worker) maintain(ctx context.Context) {
	q := store.New(w.pool)
	before := w.clk.Now().Add(-w.opts.Retention)
	for _, purge := range []func(context.Context, time.Time) (int64, error){q.EventPurge, q.EventBatchPurge} {
		for range 100 {
			n, err := purge(ctx, before)
			if err != nil || n == 0 {
				break
			}
		}
	}
	for range 100 {
		n, err := q.EventDeliveryPurge(ctx, before)
		if err != nil || n == 0 {
			break
		}
	}
	_ = q.EventStreamTokenPurge(ctx)
	rows, err := q.EventDeliveryOldest(ctx)
	if err != nil {
		return
	}
	w.metrics.oldest.Reset()
	now := w.clk.Now()
	for _, r := range rows {
		w.metrics.oldest.WithLabelValues(itoa(r.EndpointID)).Set(now.Sub(r.Oldest).Seconds())
	}
}

// retryAt is when a delivery that has failed failures times (counting this
// attempt's failure, if it was one) is tried again, or false to give up. A
// receiver's Retry-After (after) is the wait when given, and such an answer does
// not count as a failure: the receiver said when to come back. Otherwise the wait
// is the schedule's step for this failure, with jitter. It gives up only once the
// schedule's steps are used up and the delivery is as old as the whole schedule.
func (w *Worker) retryAt(failures int, created, now time.Time, after *time.Time) (time.Time, bool) {
	steps := backoff.Steps(w.opts.Schedule)
	if failures > len(steps) && now.Sub(created) >= steps.Total() {
		return time.Time{}, false
	}
	if after != nil {
		return *after, true
	}
	// ±20 % jitter, so an endpoint coming back is not hit by every retry at once.
	return now.Add(backoff.Jitter(steps.Delay(max(failures, 1)), 0.8, 1.2)), true
}

func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}
