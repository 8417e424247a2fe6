package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/complaint"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/media"
	"github.com/sendonce/sendonce/internal/operator"
	"github.com/sendonce/sendonce/internal/optin"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/startstop"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/tracking"
	"github.com/sendonce/sendonce/internal/transactional"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// executorServices builds the background services of an executor process: the
// executor on execPool (sending, hearing campaign notifications on listener, which
// the caller runs), the complaint guard beside it, event delivery and the opt-in
// purge on the main pool. The caller starts and stops them (startstop.Runner): the
// executor's stop stops claiming, lets in-flight sends finish within the
// context's deadline, flushes acknowledgements and releases unsent claims.
func executorServices(cfg config.Config, execPool, pool *pgxpool.Pool, listener *postgres.Listener, p provider.Provider, senders executor.Senders,
	mb *render.Builder, signer *unsubscribe.Signer, log *slog.Logger, reg prometheus.Registerer) ([]startstop.Service, error) {
	e, err := newExecutor(cfg, execPool, listener, p, senders, mb, signer, log, reg)
	if err != nil {
		return nil, err
	}
	// The complaint-rate guard runs beside the executor (every replica; its passes
	// are idempotent), once a minute.
	guard := &complaint.Guard{Pool: execPool, Max: cfg.ComplaintRateMax, Window: cfg.ComplaintWindow,
		MinDelivered: cfg.ComplaintMinDelivered, Log: log}
	// Event deliveries (fan-out, signed deliveries, retention) run where sending
	// runs, on the main pool; a stop waits for the deliveries in flight (each at most
	// event.Timeout).
	events := event.NewWorker(pool, event.WorkerOptions{
		Guard:       event.Guard{AllowHTTP: cfg.EventAllowHTTP, AllowPrivate: cfg.EventAllowPrivate},
		Concurrency: cfg.EventConcurrency, PerEndpoint: cfg.EventEndpointConcurrency, Heartbeat: cfg.Heartbeat,
		Retention: cfg.EventRetention, Registry: reg, Logger: log,
	})
	// So does the purge of sign-ups left unconfirmed past SENDONCE_OPTIN_PENDING_TTL.
	purge := optin.Purger{Service: optin.NewService(pool, nil, nil, optin.Options{}),
		TTL: cfg.OptinPendingTTL, Every: cfg.OptinPurgeInterval, Log: log}
	log.Info("executor configured", "provider", cfg.Provider, "idempotent", p.Idempotent(), "batch_size", cfg.BatchSize,
		"event_allow_private", cfg.EventAllowPrivate, "event_allow_http", cfg.EventAllowHTTP)
	// And the removal of the accounts the operator deleted, in batches with a
	// pause between them, so the other tenants' claims are not stalled.
	// With their images' bytes, when those are in a media store; the sweep of
	// bytes no image names (an upload cut short, a purge's failure) runs hourly.
	blobs, err := mediaStore(cfg)
	if err != nil {
		return nil, err
	}
	library := media.NewServiceIn(pool, blobs)
	accountPurge := operator.Purger{Pool: pool, Accounts: account.NewService(pool), Media: library, Batch: cfg.AccountPurgeBatch,
		Pause: cfg.AccountPurgePause, Every: cfg.AccountPurgeInterval, Log: log}
	return []startstop.Service{e,
		startstop.NewLoop(func(ctx context.Context) { guard.Run(ctx, time.Minute) }),
		startstop.NewLoop(events.Run),
		startstop.NewLoop(purge.Run),
		startstop.NewLoop(accountPurge.Run),
		startstop.NewLoop(func(ctx context.Context) { library.RunSweep(ctx, media.SweepAge, log) }),
	}, nil
}

// newExecutor builds the in-process executor on pool.
func newExecutor(cfg config.Config, pool *pgxpool.Pool, listener *postgres.Listener, p provider.Provider, senders executor.Senders,
	mb *render.Builder, signer *unsubscribe.Signer, log *slog.Logger, reg prometheus.Registerer) (*executor.Executor, error) {
	ecfg := executorConfig(cfg, signer.Links(cfg.PublicURL, cfg.UnsubscribeMailto))
	ecfg.Messages = mb
	// Transactional messages go through the same executor; marketing ones carry the
	// one-click unsubscribe links, naming the message and its address.
	tb := transactional.Builder{Messages: mb,
		Links: signer.MessageLinks(cfg.PublicURL, cfg.UnsubscribeMailto), Attachments: transactional.LoadAttachments(pool)}
	// Campaign recipients' click, open and web-view links, signed on the same key ring.
	tk := tracking.NewTokens(signer.Ring(), cfg.PublicURL)
	// A tracked message's click and open links (message tokens, their own domain).
	tb.Tracking = func(accountID, streamID, sendID, messageID int64, links int, clicks, opens bool) (func(int) string, string) {
		return tk.MessageLinks(tracking.Send{AccountID: accountID, CampaignID: streamID, SendID: sendID, MessageID: messageID},
			links, clicks, opens)
	}
	// A message's own "view in browser" page (a message view token).
	tb.WebView = func(accountID, streamID, sendID, messageID int64) string {
		return tk.MessageViewURL(tracking.Send{AccountID: accountID, CampaignID: streamID, SendID: sendID, MessageID: messageID})
	}
	ecfg.Transactional = tb
	ecfg.Tracking = func(accountID, campaignID, sendID int64, links int, clicks, opens bool) (func(int) string, string, string) {
		return tk.Links(tracking.Send{AccountID: accountID, CampaignID: campaignID, SendID: sendID}, links, clicks, opens)
	}
	ecfg.Senders = senders
	ecfg.Sequences = &sequence.Advancer{Pool: pool, Log: log}
	// A step whose templates use .Event reads its send's event data.
	ecfg.SequenceData = sequence.SendData(pool)
	if !p.Idempotent() && cfg.Provider == "smtp" && ecfg.Workers > cfg.SMTPConns {
		// A worker waiting for one of the provider's connections holds a leased row;
		// after a crash a non-idempotent provider's leased rows all become unknown,
		// so claim no more than the provider can really have in flight.
		log.Info("executor workers capped at the SMTP connections", "workers", cfg.SMTPConns, "configured", ecfg.Workers)
		ecfg.Workers = cfg.SMTPConns
	}
	// Campaign notifications come on the process's LISTEN connection (run.go).
	ecfg.Listener = listener
	return executor.New(pool, p, ecfg, log, reg)
}

// executorConfig maps the SENDONCE_* executor settings onto the executor's Config.
func executorConfig(cfg config.Config, links func(accountID, campaignID, subscriberID int64) (string, string)) executor.Config {
	return executor.Config{
		Tick:                  cfg.Tick,
		Workers:               cfg.Workers,
		BatchSize:             cfg.BatchSize,
		PrefetchNonIdempotent: cfg.PrefetchNonIdempotent,
		Lease:                 cfg.Lease,
		MaxAttempts:           cfg.MaxAttempts,
		BackoffBase:           cfg.BackoffBase,
		BackoffMax:            cfg.BackoffMax,
		RatePerSecond:         cfg.RatePerSecond,
		AccountRatePerSecond:  cfg.AccountRatePerSecond,
		SendRetention:         cfg.SendRetention,
		MessageRetention:      cfg.MessageRetention,
		SequenceRetention:     cfg.SequenceRetention,
		AuditRetention:        cfg.AuditRetention,
		Heartbeat:             cfg.Heartbeat,
		StartupGrace:          cfg.StartupGrace,
		MessageSweep:          cfg.MessageSweep,
		MessageHoldMax:        cfg.MessageHoldMax,
		PoolFailback:          cfg.PoolFailback,
		AttachmentCacheBytes:  attachmentCacheBytes(cfg.AttachmentCacheMB),
		ProviderName:          cfg.Provider,
		Links:                 links,
		SegmentBuildTimeout:   cfg.SegmentBuildTimeout,
		ClockSkew:             cfg.ClockSkew,
	}
}

// attachmentCacheBytes is the executor's cap for SENDONCE_ATTACHMENT_CACHE_MB
// (0 there turns the cache off, which the executor spells as negative).
func attachmentCacheBytes(mb int) int {
	if mb == 0 {
		return -1
	}
	return mb << 20
}

// unsubscribeLinks returns the executor's link function for bench, which runs no
// server: signed one-click URLs on the public URL, and the mailto address when one
// is configured.
func unsubscribeLinks(cfg config.Config) (func(accountID, campaignID, subscriberID int64) (string, string), error) {
	keys, err := token.NewRing(cfg.UnsubscribeSecret)
	if err != nil {
		return nil, err
	}
	return unsubscribe.NewSigner(keys).Links(cfg.PublicURL, cfg.UnsubscribeMailto), nil
}
