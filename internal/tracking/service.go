package tracking

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/store"
)

// Config tunes the recorder; zero values take the defaults noted.
type Config struct {
	// FlushInterval is how often held hits are written; default 250ms.
	FlushInterval time.Duration
	// BatchHits is the most hits one insert statement carries; default 1000.
	BatchHits int
	// MaxHeld bounds the hits held in memory; a hit arriving when it is reached is
	// counted and dropped (the redirect still answers): clicks never wait on the
	// database. Default 100,000.
	MaxHeld int
	// BurstWindow is how close together the clicks of one message on all of its
	// links must be to be a burst; each hit is held at least this long before it
	// is written, so a burst is seen whole. Default 1s.
	BurstWindow time.Duration
	// DeliveryWindow marks hits this soon after their send's sent_at; default 10s.
	DeliveryWindow time.Duration
	// LinkCache bounds the campaigns whose links are cached; default 10,000.
	LinkCache int
	// Now is the clock; nil means time.Now. Tests inject it.
	Now func() time.Time
}

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.FlushInterval, 250*time.Millisecond)
	def(&c.BurstWindow, time.Second)
	def(&c.DeliveryWindow, 10*time.Second)
	if c.BatchHits <= 0 {
		c.BatchHits = 1000
	}
	if c.MaxHeld <= 0 {
		c.MaxHeld = 100_000
	}
	if c.LinkCache <= 0 {
		c.LinkCache = 10_000
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Service records clicks and opens and serves the stats, the archive and the web view.
type Service struct {
	pool   *pgxpool.Pool
	q      *store.Queries
	tokens *Tokens
	cfg    Config
	log    *slog.Logger

	mu   sync.Mutex
	held []*Hit // arrival order; written ones stay while they may still join a burst
	// unwritten counts the held hits not written yet.
	unwritten int
	dropped   atomic.Int64
	wake      chan struct{}

	linkMu sync.RWMutex
	links  map[int64]campaignLinks
	// msgLinks are single messages' stored URLs, by message id (same bound).
	msgLinks map[int64]campaignLinks

	flushMu sync.Mutex // one flush at a time

	totalsMu sync.Mutex
	totals   map[int64]cachedTotals
}

type campaignLinks struct {
	accountID int64
	urls      []string // index i+1 is urls[i]
}

// New returns a Service on pool whose tokens come from tokens.
func New(pool *pgxpool.Pool, tokens *Tokens, cfg Config, log *slog.Logger) *Service {
	cfg.defaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{pool: pool, q: store.New(pool), tokens: tokens, cfg: cfg, log: log,
		wake: make(chan struct{}, 1), links: map[int64]campaignLinks{},
		msgLinks: map[int64]campaignLinks{}, totals: map[int64]cachedTotals{}}
}

// Tokens returns the service's token maker.
func (s *Service) Tokens() *Tokens { return s.tokens }

// errNotFound is what every bad token, unknown link or missing row answers: 404,
// saying nothing of why.
var errNotFound = apperr.New(apperr.NotFound, "not found")

// Click verifies a click token, records the hit and returns the stored URL to
// redirect to; "" for the honeypot link, which has none. The request path reads
// the campaign's links once (then cached) and writes nothing.
func (s *Service) Click(ctx context.Context, token, method, ua string) (string, error) {
	c, err := s.tokens.OpenClick(token)
	if err != nil {
		return "", errNotFound
	}
	url := ""
	if c.Link > 0 {
		var urls []string
		if c.MessageID != 0 {
			urls, err = s.messageLinks(ctx, c.AccountID, c.MessageID)
		} else {
			urls, err = s.campaignLinks(ctx, c.AccountID, c.CampaignID)
		}
		if err != nil {
			return "", err
		}
		if c.Link > len(urls) {
			return "", errNotFound
		}
		url = urls[c.Link-1]
	}
	s.record(newHit(kindClick, c.Send, c.Link, c.Links, s.cfg.Now(), method, ua))
	return url, nil
}

// Open verifies an open token and records the hit.
func (s *Service) Open(token, method, ua string) error {
	send, err := s.tokens.OpenSend(token)
	if err != nil {
		return errNotFound
	}
	s.record(newHit(kindOpen, send, 0, 0, s.cfg.Now(), method, ua))
	return nil
}

// campaignLinks returns a campaign's stored URLs, from the cache or read once.
func (s *Service) campaignLinks(ctx context.Context, accountID, campaignID int64) ([]string, error) {
	s.linkMu.RLock()
	l, ok := s.links[campaignID]
	s.linkMu.RUnlock()
	if ok {
		if l.accountID != accountID {
			return nil, errNotFound
		}
		return l.urls, nil
	}
	rows, err := s.q.TrackedLinksGet(ctx, store.TrackedLinksGetParams{AccountID: accountID, CampaignID: campaignID})
	if err != nil {
		return nil, err
	}
	urls := make([]string, 0, len(rows))
	for i, r := range rows {
		if int(r.Idx) != i+1 {
			return nil, errors.New("tracking: tracked_links are not numbered 1..n")
		}
		urls = append(urls, r.Url)
	}
	if len(urls) == 0 {
		// Not cached: the links of a campaign are stored before its first send, so
		// none means another account's campaign or a deleted one.
		return nil, nil
	}
	s.linkMu.Lock()
	if len(s.links) >= s.cfg.LinkCache {
		clear(s.links)
	}
	s.links[campaignID] = campaignLinks{accountID: accountID, urls: urls}
	s.linkMu.Unlock()
	return urls, nil
}

// messageLinks returns a single message's stored URLs, from the cache or read
// once. A message deleted by retention after its links were cached keeps
// redirecting from this process's cache (its hits are no longer written); the
// cache holds at most LinkCache messages.
func (s *Service) messageLinks(ctx context.Context, accountID, messageID int64) ([]string, error) {
	s.linkMu.RLock()
	l, ok := s.msgLinks[messageID]
	s.linkMu.RUnlock()
	if ok {
		if l.accountID != accountID {
			return nil, errNotFound
		}
		return l.urls, nil
	}
	rows, err := s.q.MessageLinksGet(ctx, store.MessageLinksGetParams{AccountID: accountID, MessageID: messageID})
	if err != nil {
		return nil, err
	}
	urls := make([]string, 0, len(rows))
	for i, r := range rows {
		if int(r.Idx) != i+1 {
			return nil, errors.New("tracking: message_links are not numbered 1..n")
		}
		urls = append(urls, r.Url)
	}
	if len(urls) == 0 {
		return nil, nil // another account's message, a deleted one, or one without links
	}
	s.linkMu.Lock()
	if len(s.msgLinks) >= s.cfg.LinkCache {
		clear(s.msgLinks)
	}
	s.msgLinks[messageID] = campaignLinks{accountID: accountID, urls: urls}
	s.linkMu.Unlock()
	return urls, nil
}

// record holds a hit for the flusher, or drops it when MaxHeld hits are held.
func (s *Service) record(h Hit) {
	s.mu.Lock()
	if s.unwritten >= s.cfg.MaxHeld {
		s.mu.Unlock()
		s.dropped.Add(1)
		return
	}
	s.held = append(s.held, &h)
	s.unwritten++
	full := s.unwritten >= s.cfg.BatchHits
	s.mu.Unlock()
	if full {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// Dropped is the number of hits dropped: MaxHeld hits were held when they came,
// or PostgreSQL refused them maxWriteAttempts times.
func (s *Service) Dropped() int64 { return s.dropped.Load() }

// Held is the number of hits held and not yet written.
func (s *Service) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unwritten
}

// Register adds the tracker's gauges to reg: sendonce_tracking_hits_held and
// sendonce_tracking_hits_dropped_total.
func (s *Service) Register(reg prometheus.Registerer) error {
	return errors.Join(
		reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sendonce_tracking_hits_held",
			Help: "Click and open hits held in memory, not yet written."}, func() float64 { return float64(s.Held()) })),
		reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sendonce_tracking_hits_dropped_total",
			Help: "Click and open hits dropped: too many held, or refused by PostgreSQL five times."},
			func() float64 { return float64(s.Dropped()) })))
}

// Run writes held hits every FlushInterval until ctx ends, then writes what is
// left (with the context given to Close, through Flush(ctx, true)).
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
		if _, err := s.Flush(ctx, false); err != nil && ctx.Err() == nil {
			s.log.Warn("tracking: writing hits failed; they stay held and are retried", "err", err)
		}
	}
}

// Flush writes the held hits that arrived at least BurstWindow ago (all of them
// when all is set: at shutdown, and in tests), classified, with their events, in
// statements of at most BatchHits; it returns how many it wrote. A failed
// statement leaves its hits held for the next flush.
func (s *Service) Flush(ctx context.Context, all bool) (int, error) {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	now := s.cfg.Now()
	cut := now.Add(-s.cfg.BurstWindow)
	s.mu.Lock()
	var todo []*Hit
	held := s.held
	for _, h := range held {
		if !h.written() && (all || !h.At.After(cut)) {
			todo = append(todo, h)
		}
	}
	s.mu.Unlock()
	if len(todo) == 0 {
		s.prune(now)
		return 0, nil
	}
	classifyBursts(todo, held, s.cfg.BurstWindow)
	// Hits of a statement that failed are retried one per statement, so one that
	// can never be written is dropped alone (maxWriteAttempts).
	var batches [][]*Hit
	var fresh []*Hit
	s.mu.Lock()
	for _, h := range todo {
		if h.attempts > 0 {
			batches = append(batches, []*Hit{h})
		} else {
			fresh = append(fresh, h)
		}
	}
	s.mu.Unlock()
	for len(fresh) > 0 {
		n := min(len(fresh), s.cfg.BatchHits)
		batches = append(batches, fresh[:n])
		fresh = fresh[n:]
	}
	written := 0
	var errs []error
	for _, b := range batches {
		if err := s.insert(ctx, b); err != nil {
			s.failed(b)
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		s.mu.Lock()
		for _, h := range b {
			h.done = true
		}
		s.unwritten -= len(b)
		s.mu.Unlock()
		written += len(b)
	}
	s.prune(now)
	return written, errors.Join(errs...)
}

// maxWriteAttempts is how many failed statements a hit may be part of before it
// is dropped: a batch that can never be written (a hit whose campaign was deleted
// between the statement's check and its insert) must not stop every later one.
const maxWriteAttempts = 5

// failed counts a failed write against each of hits, and drops (as written, and
// counted in Dropped) those that reached maxWriteAttempts.
func (s *Service) failed(hits []*Hit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range hits {
		h.attempts++
		if h.attempts >= maxWriteAttempts && !h.done {
			h.done = true
			s.unwritten--
			s.dropped.Add(1)
		}
	}
}

// written reports whether the flusher wrote the hit.
func (h *Hit) written() bool { return h.done }

// prune forgets written hits too old to join a burst with a hit still held.
func (s *Service) prune(now time.Time) {
	cut := now.Add(-3 * s.cfg.BurstWindow)
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := s.held[:0]
	for _, h := range s.held {
		if !h.written() || h.At.After(cut) {
			keep = append(keep, h)
		}
	}
	clear(s.held[len(keep):])
	s.held = keep
}

func (s *Service) insert(ctx context.Context, hits []*Hit) error {
	p := store.TrackingHitsInsertParams{DeliveryWindowSeconds: s.cfg.DeliveryWindow.Seconds()}
	for _, h := range hits {
		p.AccountIds = append(p.AccountIds, h.AccountID)
		p.CampaignIds = append(p.CampaignIds, h.CampaignID)
		p.SendIds = append(p.SendIds, h.SendID)
		p.Kinds = append(p.Kinds, h.Kind)
		p.LinkIdxs = append(p.LinkIdxs, int32(h.Link))
		p.OccurredAts = append(p.OccurredAts, h.At)
		p.Methods = append(p.Methods, h.Method)
		p.UserAgents = append(p.UserAgents, h.UA)
		p.Reasons = append(p.Reasons, strings.Join(h.Reasons, ","))
		p.MessageIds = append(p.MessageIds, h.MessageID)
	}
	_, err := s.q.TrackingHitsInsert(ctx, p)
	return err
}
