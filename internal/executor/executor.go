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
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/clock"
	"github.com/sendonce/sendonce/internal/liveness"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testsignal"
)

// Provider is what the executor needs of an email provider.
type Provider interface {
	// Send hands one message over and returns the provider's message id. Errors are
	// classified with provider.ClassOf. A campaign message's HTML and Text are the
	// worker's reused buffers, valid only until Send returns (provider.Provider).
	Send(ctx context.Context, m provider.Message) (string, error)
	// Idempotent reports whether the provider drops a second message with the same
	// idempotency key (JobID); only then is replaying an in-flight send safe.
	Idempotent() bool
}

// Config is the executor's configuration; zero values take the defaults noted.
type Config struct {
	Tick      time.Duration // scheduler fallback poll; default 60s
	Workers   int           // concurrent sends; default 32
	BatchSize int           // largest claim; default 50
	// Lease is how long a claim may stay in flight; default 2m. A send starts only
	// while more than a third of it is left, so it must be at least 3 × the provider timeout.
	Lease       time.Duration
	MaxAttempts int           // attempts (sends or expired leases) before a row fails; default 5
	BackoffBase time.Duration // first retry delay; default 30s
	BackoffMax  time.Duration // retry delay cap; default 1h
	// RatePerSecond caps this process's sends; AccountRatePerSecond each account's. 0: unlimited.
	RatePerSecond        float64
	AccountRatePerSecond float64
	// AttachmentCacheBytes caps the base64 encodings of campaigns' files kept so
	// that a file is encoded once per campaign, not once per recipient; 0 means
	// attachment.DefaultCacheBytes, negative no cache.
	AttachmentCacheBytes int
	// Maintenance is how often expired leases are rescued and finished campaigns
	// closed; default min(Tick, 5s).
	Maintenance time.Duration
	// Heartbeat is how often this process refreshes its liveness row; default 2s.
	// An executor silent for three heartbeats is dead: its in-flight rows are
	// rescued at the next heartbeat of a live executor, long before their lease ends.
	Heartbeat time.Duration
	// StartupGrace is how old a claim stamped with no executor (made by a release
	// before liveness, during a rolling upgrade) must be before its rows are
	// rescued as a dead executor's; default 30s. The lease remains the bound for
	// the rows of an old process that still runs and is slower than this.
	StartupGrace time.Duration
	// Poll is how long the dispatcher waits before asking an empty campaign again
	// (rows waiting for a retry time); default 1s.
	Poll time.Duration
	// MessageSweep is how often one statement looks for message streams with work
	// that no NOTIFY announced (rescued or released rows, a lost notification) and
	// for the next send_at or retry time of each; default 5s. An idle stream is
	// otherwise never claimed.
	MessageSweep time.Duration
	// SendRetention, when positive, has maintenance delete the settled send rows of
	// campaigns that finished (sent or cancelled) longer ago, in bounded batches,
	// keeping their counts by status for the stats. 0 keeps every row.
	SendRetention time.Duration
	// MessageRetention, when positive, has maintenance delete the transactional
	// messages accepted longer ago whose send has settled, with their send rows, in
	// bounded batches. 0 keeps every message (and its key's idempotency) for good.
	MessageRetention time.Duration
	// SequenceRetention, when positive, has maintenance delete, for sequence
	// enrollments that ended longer ago than this, their settled step sends (with
	// their event data) and their step log lines, and the tracked events older
	// than this (0: keep them all). The enrollments stay.
	SequenceRetention time.Duration
	// AuditRetention, when positive, has maintenance delete the audit log entries
	// older than this, in bounded batches. 0 keeps every entry.
	AuditRetention time.Duration
	// AckInterval and AckBatch bound how long and how many acknowledgements the
	// completer coalesces; defaults 5ms and 500.
	AckInterval time.Duration
	AckBatch    int
	// PrefetchNonIdempotent lets campaigns under ambiguous_policy=skip sent through
	// a provider that cannot deduplicate (smtp) keep the prefetch queue's two
	// batches too. Off, they claim only as many rows as workers are free to start
	// them, because a crash turns every leased row of theirs into unknown, never
	// sent (depth).
	PrefetchNonIdempotent bool
	// Links returns a recipient's one-click unsubscribe URL and mailto address.
	Links func(accountID, campaignID, subscriberID int64) (httpsURL, mailto string)
	// Tracking returns a campaign recipient's click URLs (for the campaign's links
	// tracked links), open pixel and "view in browser" page; nil: none (the
	// {{.WebViewURL}} of a template renders empty).
	Tracking func(accountID, campaignID, sendID int64, links int, clicks, opens bool) (click func(int) string, open, view string)
	// Messages builds every message (keyed Message-IDs); nil means a builder with a
	// random key, whose Message-IDs do not survive the process (tests only).
	Messages *render.Builder
	// Transactional builds the messages of the accounts' message streams; nil
	// means this executor claims no transactional message.
	Transactional MessageBuilder
	// Sequences advances the accounts' sequences (sequence.go); nil: this process
	// advances none (their step sends are still claimed like any campaign's).
	Sequences SequenceAdvancer
	// SequenceData returns a sequence step send's event data (by its job id) for
	// its templates' .Event; called only for steps whose templates use .Event. Nil:
	// .Event is empty.
	SequenceData func(ctx context.Context, accountID int64, jobID string) ([]byte, error)
	// Senders routes campaigns that name a sender to its provider; nil: every
	// campaign goes through the executor's provider.
	Senders Senders
	// ProviderName names the executor's own provider (SENDONCE_PROVIDER), recorded on
	// every row sent through it; default "default".
	ProviderName string
	// PoolFailback is how long a sender pool passes over a sender that refused
	// before accepting (connection refused, TLS or AUTH failure, 421, MAIL FROM
	// refused) before it tries it again; default 1m (SENDONCE_POOL_FAILBACK).
	PoolFailback time.Duration
	// MessageHoldMax is how long a transactional message waits for a sender that
	// fails on its credentials or setup (paused after repeated auth failures)
	// before it fails with the reason; default 24h.
	MessageHoldMax time.Duration
	// Now injects the date (tests); nil means the database's now() and the wall
	// clock. The executor reads all its time through one clock.Clock built of Now
	// and ClockSkew (its clk).
	Now func() time.Time
	// ClockSkew offsets this process's date (Now, or the wall clock) and nothing the
	// database reads: it plays a host whose clock is off from PostgreSQL's
	// (SENDONCE_CLOCK_SKEW, for tests and the skewed-clock chaos run). Whatever
	// it is, leases, heartbeats and retry times must hold on the database's clock.
	ClockSkew time.Duration
	// SegmentBuildTimeout bounds the recipient build of a campaign with a segment
	// (statement_timeout); default 10m. A build that exceeds it fails the campaign.
	SegmentBuildTimeout time.Duration
	// Listener, when set, is the process's LISTEN connection, shared with the API:
	// the executor hears campaign notifications there, and its caller runs it
	// (after Start). Nil: the executor holds a LISTEN connection of its own.
	Listener *postgres.Listener
	// ListenPool, when set and Listener is not, is where the executor's own LISTEN
	// connection comes from: a pool that keeps sessions when the executor's own
	// goes through a transaction pooler.
	ListenPool *pgxpool.Pool
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
	def(&c.MessageSweep, 5*time.Second)
	def(&c.Heartbeat, 2*time.Second)
	def(&c.StartupGrace, 30*time.Second)
	def(&c.AckInterval, 5*time.Millisecond)
	def(&c.MessageHoldMax, 24*time.Hour)
	def(&c.PoolFailback, time.Minute)
	if c.ProviderName == "" {
		c.ProviderName = "default"
	}
	if c.Workers <= 0 {
		c.Workers = 32
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 50
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.AckBatch <= 0 {
		c.AckBatch = 500
	}
	if c.Messages == nil {
		c.Messages = render.NewRandomBuilder()
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
	own      *route // the route through provider
	pace     *pacer // per domain group pacing and warm-up caps (pacing.go)
	log      *slog.Logger
	metrics  *metrics
	// clk is this process's time (internal/clock): the date, injected by tests
	// (Config.Now) and skewed by Config.ClockSkew, for what the process dates and
	// measures for itself (the time left of a lease since its claim began, a
	// heartbeat's age, a retry's wait; never compared with a timestamp the
	// database wrote); DB() for the date handed to SQL; the pace its timers,
	// polls and metrics keep.
	clk     clock.Clock
	retry   retryPolicy
	live    *liveness.Registration
	lost    liveness.LostClaims // a claim may have committed unseen (lostclaim.go); dispatcher only
	refused refusals            // pool senders that refused before accepting (pool.go)

	wakeSched    chan struct{} // a NOTIFY or a start: look for due campaigns
	wakeDispatch chan struct{} // worker slots freed
	wakeRefresh  chan struct{} // campaigns may have changed (start, resume)
	jobs         chan job
	// notified holds the campaign ids NOTIFY named since the dispatcher last looked:
	// a message stream is claimed again only when named or due (stream.go).
	notified notifiedSet
	// streamsSwept is when the dispatcher last ran the streams' sweep.
	streamsSwept clock.Instant
	// messageJobs holds claimed transactional messages; workers take them before
	// any campaign row, so a message never queues behind a campaign's prefetched batch.
	messageJobs chan job
	results     chan result

	// free is the room left in the prefetch queue: depth() less the rows of claims
	// under way and the claimed rows no worker has taken yet. Claims fill it, a
	// worker taking a job empties it; acknowledgements do not hold it.
	free atomic.Int64
	// busy counts the workers holding a job (taken off the queue, its result not
	// yet handed to the completer).
	busy atomic.Int64
	// idleWait: a claim waits for a worker to free up (shallow); the next worker
	// that does wakes the dispatcher.
	idleWait atomic.Bool
	// unacked counts the rows handed to the workers and not yet acknowledged.
	unacked  atomic.Int64
	mu       sync.Mutex
	released []claimRef // claimed rows never sent, handed back at shutdown
	// retainAfter is when the maintenance loop next looks for send rows past
	// retention; retainBatch is the rows one retention statement deletes.
	retainAfter time.Time
	// retainMessagesAfter is the same for transactional messages.
	retainMessagesAfter time.Time
	// retainSequencesAfter is the same for sequence rows.
	retainSequencesAfter time.Time
	// retainAuditAfter is the same for audit log entries.
	retainAuditAfter time.Time
	// sweepAttachmentsAfter is the same for unreferenced attachment files.
	sweepAttachmentsAfter time.Time
	// encoded holds campaigns' files in base64, shared by their messages.
	encoded     *attachment.EncodedCache
	retainBatch int32
	// queuedAfter is when maintenance next recounts the queued-rows gauge.
	queuedAfter time.Time

	claimCtx   context.Context
	stopClaims context.CancelFunc // ends scheduler, dispatcher, listener, maintenance
	stopSends  context.CancelFunc // aborts in-flight provider calls (shutdown deadline)
	sendCtx    context.Context
	stopWrites context.CancelFunc // ends the completer's statements (the shutdown deadline itself)
	writeCtx   context.Context
	loops      sync.WaitGroup // background loops
	dispatcher sync.WaitGroup
	workers    sync.WaitGroup
	completer  sync.WaitGroup
	stopOnce   sync.Once
	started    bool // Start ran: claims wait for the liveness registration

	// signals are the moments tests wait on; never initialised in production.
	signals testSignals
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
		clk:          clock.New(cfg.Now, cfg.ClockSkew),
		retry:        retryPolicy{base: cfg.BackoffBase, max: cfg.BackoffMax},
		wakeSched:    make(chan struct{}, 1),
		wakeDispatch: make(chan struct{}, 1),
		wakeRefresh:  make(chan struct{}, 1),
		jobs:         make(chan job, prefetchDepth(cfg)),
		messageJobs:  make(chan job, prefetchDepth(cfg)),
		results:      make(chan result, cfg.Workers),
	}
	e.live = e.newLiveness()
	e.encoded = attachment.NewEncodedCache(cfg.AttachmentCacheBytes)
	e.own = e.ownRoute()
	e.pace = newPacer(e.q)
	e.free.Store(int64(e.depth()))
	e.retainBatch = retentionBatch
	// Until Start, nothing is stopped; tests drive the steps directly.
	e.claimCtx, e.stopClaims = context.WithCancel(context.Background())
	e.sendCtx, e.stopSends = context.WithCancel(context.Background())
	e.writeCtx, e.stopWrites = context.WithCancel(context.Background())
	return e, nil
}

// Start launches the executor's goroutines. Claiming stops when ctx ends or Stop is
// called; in-flight sends are not cut by ctx, only by Stop's deadline. A second
// Start does nothing. It never fails today; the error makes the executor a
// startstop.Service like the process's other background services.
func (e *Executor) Start(ctx context.Context) error {
	if e.started {
		return nil
	}
	e.started = true
	ctx, e.stopClaims = context.WithCancel(ctx)
	e.claimCtx = ctx
	e.sendCtx, e.stopSends = context.WithCancel(context.WithoutCancel(ctx))
	e.writeCtx, e.stopWrites = context.WithCancel(context.WithoutCancel(ctx))
	for range e.cfg.Workers {
		e.workers.Add(1)
		go e.work()
	}
	e.completer.Add(1)
	go e.complete()
	e.dispatcher.Add(1)
	go e.dispatch(ctx)
	e.listen(ctx)
	e.loops.Add(3)
	go e.heartbeat(ctx)
	go e.schedule(ctx)
	go e.maintain(ctx)
	if e.cfg.Sequences != nil {
		e.loops.Add(1)
		go e.advanceSequences(ctx)
	}
	return nil
}

// Stop shuts down gracefully: stop claiming, let in-flight sends finish, acknowledge
// what was accepted, hand unsent claimed rows back to the queue and deregister.
// ctx's deadline bounds all of it: in-flight provider calls are cut a reserve
// before it (a fifth of the time left, at most a second), so the acknowledgements
// and releases that follow still fit; what is cut is reported as the provider call
// ended (a retry, or unknown when the message may have gone). Safe to call more
// than once.
func (e *Executor) Stop(ctx context.Context) error {
	var err error
	e.stopOnce.Do(func() {
		e.stopClaims()
		cutCtx := ctx
		if d, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			cutCtx, cancel = context.WithDeadline(ctx, d.Add(-min(e.clk.UntilDeadline(d)/5, time.Second)))
			defer cancel()
		}
		e.dispatcher.Wait()
		close(e.jobs)
		close(e.messageJobs)
		stop := context.AfterFunc(cutCtx, e.stopSends)
		defer stop()
		// Acknowledgements retry through an outage until the deadline, no longer
		// (a context cancelled without a deadline still lets them be written).
		if d, ok := ctx.Deadline(); ok {
			hardCtx, cancel := context.WithDeadline(context.Background(), d)
			defer cancel()
			hard := context.AfterFunc(hardCtx, e.stopWrites)
			defer hard()
		}
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
			// rows stay 'sending' and the rescuer settles them when their lease ends
			// or this executor's heartbeat is stale.
			rctx, cancel := e.shutdownStep(ctx)
			var n int64
			n, err = e.release(rctx, refs)
			cancel()
			e.log.Info("released unsent claims", "rows", n, "claimed", len(refs))
		}
		// Last: rows this process could not settle are now nobody's, and the
		// rescuers of the other executors take them at once.
		dctx, cancel := e.shutdownStep(ctx)
		if derr := e.deregister(dctx); derr != nil {
			e.log.Warn("deregister executor; it is declared dead once its heartbeat is stale", "err", derr)
		}
		cancel()
		e.stopSends()
		e.stopWrites()
	})
	return err
}

// shutdownStep is the context of one database step of Stop: not cancelled with
// ctx, but ending at its deadline, and after releaseTimeout at the latest.
func (e *Executor) shutdownStep(ctx context.Context) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	if d, ok := ctx.Deadline(); ok {
		sctx2, cancel2 := context.WithDeadline(sctx, d)
		return sctx2, func() { cancel2(); cancel() }
	}
	return sctx, cancel
}

// releaseTimeout bounds the shutdown release of unsent claims (a variable for tests).
var releaseTimeout = 10 * time.Second

// release hands claims that never reached the provider back to the queue, each
// fenced on its own attempts so another replica's live claim is never touched.
func (e *Executor) release(ctx context.Context, refs []claimRef) (int64, error) {
	return e.releaseUntil(ctx, refs, nil)
}

// releaseUntil is release with a time before which each row may not be claimed
// again (notBefore[i] for refs[i]; nil or a zero time: at once): the rows the
// pacing of their domain or sender held back (pacing.go).
func (e *Executor) releaseUntil(ctx context.Context, refs []claimRef, notBefore []time.Time) (int64, error) {
	p := store.SendReleaseManyParams{Now: e.clk.DB()}
	now := e.clk.Now()
	for i, r := range refs {
		p.Ids = append(p.Ids, r.id)
		p.Attempts = append(p.Attempts, r.attempts)
		// The database gets the wait left, which it adds to its own clock:
		// this process's clock may be skewed (a time would be off by the skew).
		wait := int64(-1)
		if i < len(notBefore) && !notBefore[i].IsZero() {
			wait = max(notBefore[i].Sub(now), 0).Microseconds()
		}
		p.WaitUs = append(p.WaitUs, wait)
	}
	return e.planned(ctx, (*store.Queries).SendPlanLinear).SendReleaseMany(ctx, p)
}

// depth is the prefetch queue's bound: claimed rows not yet taken by a worker,
// with the rows of the claims under way. Claims are of BatchSize rows whatever
// the workers are doing, and the queue holds two of them, so a claim's round trip
// overlaps the sending of the batch before it and workers never wait for the
// database (DESIGN.md §4). A prefetched row is leased like any claimed row: its
// lease is dated before its claim, a worker that reaches it with less than a
// third left hands it back unsent, the rescuer and liveness treat it as in
// flight, and a shutdown releases it unsent. After a crash the rescuer cannot
// tell it from a row in flight, so a campaign under ambiguous_policy=skip with a
// provider that cannot deduplicate (smtp) claims only for the workers free to
// start its rows (shallow) unless Config.PrefetchNonIdempotent trades that for
// the queue: then up to depth() rows more than the workers held become unknown.
func (e *Executor) depth() int { return prefetchDepth(e.cfg) }

func prefetchDepth(cfg Config) int { return 2 * cfg.BatchSize }

func (e *Executor) claimsStopped() bool { return e.claimCtx.Err() != nil }

// testSignals are the moments of the executor that its tests wait on instead
// of sleeping or polling the database (internal/testsignal). Production never
// initialises them: signalling is a nil check.
type testSignals struct {
	// claimed: a campaign's claim came back (claimFrom), dated as it claimed.
	claimed testsignal.Signal[claimSignal]
	// finished: a campaign was marked sent (finish); its id.
	finished testsignal.Signal[int64]
	// started: a campaign's build committed and it is sending (startCampaign); its id.
	started testsignal.Signal[int64]
}

// claimSignal is one claim of a campaign: the rows it took, and the date it
// asked for due rows at (at least at; nil: the database's now()).
type claimSignal struct {
	campaign int64
	rows     int
	at       *time.Time
	took     time.Duration // the claim statements' wall time (a test's log)
}

// Init readies every signal (tests, before Start).
func (s *testSignals) Init() {
	s.claimed.Init()
	s.finished.Init()
	s.started.Init()
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
