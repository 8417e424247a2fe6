// Package executor sends approved campaigns so that each recipient gets each
// campaign exactly once (DESIGN.md §3–§4): a scheduler starts due campaigns, a
// dispatcher claims disjoint batches of recipients round-robin per account, workers
// render and send, a completer acknowledges in coalesced batches, and a maintenance
// loop rescues expired leases and finishes campaigns.
package executor

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/message"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// Provider is what the executor needs of an email provider.
type Provider interface {
	// Send hands one message over and returns the provider's message id. Errors are
	// classified with provider.ClassOf.
	Send(ctx context.Context, m provider.Message) (string, error)
	// Idempotent reports whether the provider drops a second message with the same
	// idempotency key (JobID); only then is replaying an in-flight send safe.
	Idempotent() bool
}

// Config is the executor's configuration; zero values take the defaults noted.
type Config struct {
	Tick      time.Duration // scheduler fallback poll; default 60s
	Workers   int           // concurrent sends; default 16
	BatchSize int           // largest claim; default 20
	// Lease is how long a claim may stay in flight; default 2m. A send starts only
	// while more than a third of it is left, so it must be at least 3 × the provider timeout.
	Lease       time.Duration
	MaxAttempts int           // attempts (sends or expired leases) before a row fails; default 5
	BackoffBase time.Duration // first retry delay; default 30s
	BackoffMax  time.Duration // retry delay cap; default 1h
	// RatePerSecond caps this process's sends; AccountRatePerSecond each account's. 0: unlimited.
	RatePerSecond        float64
	AccountRatePerSecond float64
	// Maintenance is how often expired leases are rescued and finished campaigns
	// closed; default min(Tick, 5s).
	Maintenance time.Duration
	// Poll is how long the dispatcher waits before asking an empty campaign again
	// (rows waiting for a retry time); default 1s.
	Poll time.Duration
	// AckInterval and AckBatch bound how long and how many acknowledgements the
	// completer coalesces; defaults 5ms and 500.
	AckInterval time.Duration
	AckBatch    int
	// Links returns a recipient's one-click unsubscribe URL and mailto address.
	Links func(accountID, campaignID, subscriberID int64) (httpsURL, mailto string)
	// Messages builds every message (keyed Message-IDs); nil means a builder with a
	// random key, whose Message-IDs do not survive the process (tests only).
	Messages *message.Builder
	// Now is the clock; nil means the database's now() and time.Now. Tests inject it.
	Now func() time.Time
	// SegmentBuildTimeout bounds the recipient build of a campaign with a segment
	// (statement_timeout); default 10m. A build that exceeds it cancels the campaign.
	SegmentBuildTimeout time.Duration
}

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Tick, 60*time.Second)
	def(&c.SegmentBuildTimeout, 10*time.Minute)
	def(&c.Lease, 2*time.Minute)
	def(&c.BackoffBase, 30*time.Second)
	def(&c.BackoffMax, time.Hour)
	def(&c.Maintenance, min(c.Tick, 5*time.Second))
	def(&c.Poll, time.Second)
	def(&c.AckInterval, 5*time.Millisecond)
	if c.Workers <= 0 {
		c.Workers = 16
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 20
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.AckBatch <= 0 {
		c.AckBatch = 500
	}
	if c.Messages == nil {
		c.Messages = message.NewRandomBuilder()
	}
	if c.Links == nil {
		c.Links = func(int64, int64, int64) (string, string) { return "https://example.invalid/u", "" }
	}
}

// Executor is one process's sender. Any number of executors may run against one
// database: SKIP LOCKED claims and compare-and-set transitions make them cooperate.
type Executor struct {
	cfg      Config
	pool     *pgxpool.Pool
	q        *store.Queries
	provider Provider
	log      *slog.Logger
	metrics  *metrics

	wakeSched    chan struct{} // a NOTIFY or a start: look for due campaigns
	wakeDispatch chan struct{} // worker slots freed
	wakeRefresh  chan struct{} // campaigns may have changed (start, resume)
	jobs         chan job
	results      chan result

	mu       sync.Mutex
	free     int        // worker slots not holding a claimed, unacknowledged row
	released []claimRef // claimed rows never sent, handed back at shutdown

	claimCtx   context.Context
	stopClaims context.CancelFunc // ends scheduler, dispatcher, listener, maintenance
	stopSends  context.CancelFunc // aborts in-flight provider calls (shutdown deadline)
	sendCtx    context.Context
	loops      sync.WaitGroup // background loops
	dispatcher sync.WaitGroup
	workers    sync.WaitGroup
	completer  sync.WaitGroup
	stopOnce   sync.Once

	// observeClaim, when set (tests), wraps every claim statement.
	observeClaim func(claim func() []store.SendClaimBatchRow) []store.SendClaimBatchRow
}

// New builds an executor. reg may be nil (no metrics exported).
func New(pool *pgxpool.Pool, p Provider, cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Executor, error) {
	if pool == nil || p == nil {
		return nil, errors.New("executor: pool and provider are required")
	}
	cfg.defaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	e := &Executor{
		cfg: cfg, pool: pool, q: store.New(pool), provider: p, log: log.With("component", "executor"),
		metrics:      m,
		wakeSched:    make(chan struct{}, 1),
		wakeDispatch: make(chan struct{}, 1),
		wakeRefresh:  make(chan struct{}, 1),
		jobs:         make(chan job, cfg.Workers),
		results:      make(chan result, cfg.Workers),
		free:         cfg.Workers,
	}
	// Until Start, nothing is stopped; tests drive the steps directly.
	e.claimCtx, e.stopClaims = context.WithCancel(context.Background())
	e.sendCtx, e.stopSends = context.WithCancel(context.Background())
	return e, nil
}

// Start launches the executor's goroutines. Claiming stops when ctx ends or Stop is
// called; in-flight sends are not cut by ctx, only by Stop's deadline.
func (e *Executor) Start(ctx context.Context) {
	ctx, e.stopClaims = context.WithCancel(ctx)
	e.claimCtx = ctx
	e.sendCtx, e.stopSends = context.WithCancel(context.WithoutCancel(ctx))
	for range e.cfg.Workers {
		e.workers.Add(1)
		go e.work()
	}
	e.completer.Add(1)
	go e.complete()
	e.dispatcher.Add(1)
	go e.dispatch(ctx)
	e.loops.Add(3)
	go e.listen(ctx)
	go e.schedule(ctx)
	go e.maintain(ctx)
}

// Stop shuts down gracefully: stop claiming, let in-flight sends finish until ctx's
// deadline, acknowledge what was accepted, and hand unsent claimed rows back to the
// queue. Safe to call more than once.
func (e *Executor) Stop(ctx context.Context) error {
	var err error
	e.stopOnce.Do(func() {
		e.stopClaims()
		e.dispatcher.Wait()
		close(e.jobs)
		stop := context.AfterFunc(ctx, e.stopSends)
		defer stop()
		e.workers.Wait()
		close(e.results)
		e.completer.Wait()
		e.loops.Wait()
		e.mu.Lock()
		refs := e.released
		e.released = nil
		e.mu.Unlock()
		if len(refs) > 0 {
			// Bounded: with the database down, Stop must still return; unreleased
			// rows stay 'sending' and the rescuer settles them when their lease ends.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
			var n int64
			n, err = e.release(rctx, refs)
			cancel()
			e.log.Info("released unsent claims", "rows", n, "claimed", len(refs))
		}
		e.stopSends()
	})
	return err
}

// releaseTimeout bounds the shutdown release of unsent claims (a variable for tests).
var releaseTimeout = 10 * time.Second

// release hands claims that never reached the provider back to the queue, each
// fenced on its own attempts so another replica's live claim is never touched.
func (e *Executor) release(ctx context.Context, refs []claimRef) (int64, error) {
	p := store.SendReleaseManyParams{Now: e.now()}
	for _, r := range refs {
		p.Ids = append(p.Ids, r.id)
		p.Attempts = append(p.Attempts, r.attempts)
	}
	return e.q.SendReleaseMany(ctx, p)
}

func (e *Executor) claimsStopped() bool { return e.claimCtx.Err() != nil }

// now returns the injected time for SQL, or nil for the database's now().
func (e *Executor) now() *time.Time {
	if e.cfg.Now == nil {
		return nil
	}
	t := e.cfg.Now()
	return &t
}

// clock returns the injected time, or the wall clock.
func (e *Executor) clock() time.Time {
	if e.cfg.Now == nil {
		return time.Now()
	}
	return e.cfg.Now()
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// sleep waits d or until ctx ends; it reports whether ctx is still alive.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
