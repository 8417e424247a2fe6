package main

import (
	"log/slog"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce"
	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apidoc"
	"github.com/sendonce/sendonce/internal/audit"
	"github.com/sendonce/sendonce/internal/bounce"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/contentlint"
	"github.com/sendonce/sendonce/internal/dashboard"
	"github.com/sendonce/sendonce/internal/devinbox"
	"github.com/sendonce/sendonce/internal/dkim"
	"github.com/sendonce/sendonce/internal/dnscheck"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/erasure"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/export"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/idempotency"
	"github.com/sendonce/sendonce/internal/layout"
	"github.com/sendonce/sendonce/internal/media"
	"github.com/sendonce/sendonce/internal/operator"
	"github.com/sendonce/sendonce/internal/optin"
	"github.com/sendonce/sendonce/internal/person"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/report"
	"github.com/sendonce/sendonce/internal/segment"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/session"
	"github.com/sendonce/sendonce/internal/sso"
	"github.com/sendonce/sendonce/internal/subscriber"
	"github.com/sendonce/sendonce/internal/suppression"
	"github.com/sendonce/sendonce/internal/template"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/tracking"
	"github.com/sendonce/sendonce/internal/transactional"
	"github.com/sendonce/sendonce/internal/unsubscribe"
	"github.com/sendonce/sendonce/internal/user"
	"github.com/sendonce/sendonce/internal/webhook"
)

// shared are the pieces the API and the executor of one process share: built once
// by run, each from its one secret or setting.
type shared struct {
	pool     *pgxPool
	log      *slog.Logger
	reg      *prometheus.Registry
	listener *postgres.Listener
	// signer signs and verifies every unsubscribe, tracking and confirmation link.
	signer  *unsubscribe.Signer
	senders *sender.Service
	// credentials seals sender credentials and people's second factors.
	credentials *sender.KeyRing
	routes      *sender.Router
	provider    provider.Provider
	messages    *render.Builder
	// media holds new images' bytes (nil: in PostgreSQL), mediaStore.
	media media.Store
}

// mediaStore is the store SENDONCE_MEDIA_STORAGE names: a directory, an
// S3-compatible bucket, or nil for PostgreSQL.
func mediaStore(cfg config.Config) (media.Store, error) {
	switch cfg.MediaStorage {
	case "db":
		return nil, nil
	case "s3":
		return media.NewS3(media.S3Config{Endpoint: cfg.MediaS3Endpoint, Bucket: cfg.MediaS3Bucket,
			Region: cfg.MediaS3Region, AccessKey: cfg.MediaS3AccessKey, SecretKey: cfg.MediaS3SecretKey,
			Prefix: cfg.MediaS3Prefix, Insecure: cfg.MediaS3Insecure, PathStyle: cfg.MediaS3PathStyle})
	}
	return media.NewDir(cfg.MediaDir), nil
}

// apiDeps builds every service the API serves, on the main pool, and returns the
// tracker: its flusher is the caller's to run (tracking.Service.Run).
func apiDeps(cfg config.Config, sh shared) (httpapi.Deps, *tracking.Service, error) {
	pool := sh.pool
	keys := sh.signer.Ring()
	accounts := account.NewService(pool)
	messages := transactional.NewService(pool, sh.messages)
	events := event.NewService(pool, event.Guard{AllowHTTP: cfg.EventAllowHTTP, AllowPrivate: cfg.EventAllowPrivate})
	events.MaxEndpoints = cfg.EventEndpointsPerAccount
	reference, err := apidoc.Render(sendonce.OpenAPI)
	if err != nil {
		return httpapi.Deps{}, nil, err
	}
	opKey, err := operator.ParseKeyHash(cfg.OperatorKeyHash)
	if err != nil {
		return httpapi.Deps{}, nil, err
	}
	// Clicks and opens are held in memory and written in batches by the
	// tracker's flusher (run starts it).
	tracker := tracking.New(pool, tracking.NewTokens(keys, cfg.PublicURL), tracking.Config{}, sh.log)
	campaigns := campaign.NewService(pool)
	campaigns.Messages = sh.messages
	hooks := webhook.NewService(pool, webhook.Options{
		SoftBounceLimit: cfg.SoftBounceLimit, SoftBounceWindow: cfg.SoftBounceWindow,
	})
	d := httpapi.Deps{
		Pool: pool, Logger: sh.log, Registry: sh.reg, OpenAPI: sendonce.OpenAPI, Listener: sh.listener,
		Reference: reference, Dashboard: dashboard.New(),
		Accounts:      accounts,
		Operator:      operator.API{Service: operator.NewService(pool, accounts), Key: opKey},
		Unsubscribe:   unsubscribe.NewService(pool, sh.signer),
		Webhooks:      webhook.API{Service: hooks},
		Subscribers:   subscriber.NewService(pool),
		Suppressions:  suppression.API{Pool: pool},
		Campaigns:     campaigns,
		Templates:     template.API{Service: template.NewService(pool)},
		Media:         media.API{Service: media.NewServiceIn(pool, sh.media), PublicURL: cfg.PublicURL},
		Layouts:       layout.API{Service: layout.NewService(pool)},
		Lint:          contentlint.API{},
		Transactional: messages,
		Segments:      segment.API{Service: segment.NewService(pool, cfg.SegmentTimeout)},
		Sequences:     sequence.NewService(pool),
		Senders:       sender.API{Service: sh.senders},
		DKIM:          dkim.API{Service: sh.senders.DKIM()},
		Routes:        campaign.Routes{Router: sh.routes},
		Domains:       dnscheck.API{Checker: &dnscheck.Checker{Resolver: dnscheck.NewResolver(cfg.DNSServer), CacheTTL: 5 * time.Minute}},
		TestSender:    sh.provider,
		Events:        events,
		Optin: optin.API{Service: optin.NewService(pool, messages, keys, optin.Options{
			PublicURL: cfg.PublicURL, LinkTTL: cfg.OptinLinkTTL, ResendEvery: cfg.OptinResendInterval})},
		Idempotency: idempotency.NewStore(pool),
		Sessions:    session.NewService(pool, accounts),
		Audit:       audit.NewService(pool),
		Tracking:    tracking.API{Service: tracker},
	}
	// `sendonce dev` shows what the log provider "sent" in the dashboard.
	var inbox *devinbox.Service
	if lp, ok := sh.provider.(*provider.Log); ok && cfg.Dev {
		inbox = devinbox.OverLog(pool, lp)
		d.DevInbox = devinbox.API{Service: inbox}
	}
	d.Reports = report.API{Service: report.NewService(pool, d.Campaigns)}
	// The bounce mailbox settings (the executor's side reads the mailboxes).
	d.Bounces = bounce.API{Service: bounce.NewService(pool, sh.credentials, bounce.NewVERP(keys), hooks,
		bounce.Options{Guard: egress.Guard{AllowPrivate: cfg.EventAllowPrivate}})}
	// The service's own mail (invitations, sign-in links) goes through the
	// deployment's provider, as test sends do.
	d.Users = user.NewService(pool, d.Sessions, sh.credentials, sh.provider, user.Options{PublicURL: cfg.PublicURL,
		From: cfg.SystemFrom, FromName: cfg.SystemFromName, Logger: sh.log})
	// Single sign-on reaches each account's identity provider through the egress
	// guard, as senders and event deliveries reach theirs.
	d.SSO = sso.API{Service: sso.NewService(pool, sh.credentials, d.Users, d.Sessions, sso.Options{PublicURL: cfg.PublicURL,
		Guard: egress.Guard{AllowPrivate: cfg.EventAllowPrivate}, AllowHTTP: cfg.EventAllowHTTP, Logger: sh.log})}
	wireErasure(&d, keys, inbox)
	return d, tracker, nil
}

// wireErasure builds the erasure, person and export services and hands the
// erased-address hasher (on the unsubscribe key ring) to every way an address
// comes into an account, so an erased one comes back suppressed.
// The erasure forgets what the dev inbox holds, when there is one.
func wireErasure(d *httpapi.Deps, keys *token.Ring, inbox *devinbox.Service) {
	erased := suppression.NewErased(keys)
	d.Subscribers.Erased, d.Transactional.Erased = erased, erased
	eraser := erasure.NewService(d.Pool, erased)
	if inbox != nil {
		eraser.Memory = inbox
	}
	d.Erasure = erasure.API{Service: eraser}
	d.People, d.Exports = person.API{Service: person.NewService(d.Pool)}, export.NewService(d.Pool)
}

// apiOptions copies the configuration values the API reads.
func apiOptions(cfg config.Config) httpapi.Options {
	// Config.Validate refuses a bad entry at start-up; one that reaches here anyway
	// trusts nothing rather than something.
	trusted, _ := cfg.TrustedProxyPrefixes()
	return httpapi.Options{
		PublicURL:                 cfg.PublicURL,
		Dev:                       cfg.Dev,
		DashboardOff:              bool(cfg.DashboardOff),
		MetricsElsewhere:          cfg.MetricsAddr != "",
		DomainCheck:               cfg.DomainCheck,
		CORSOrigins:               cfg.CORSOrigins,
		TrustedProxies:            trusted,
		ReadHeaderTimeout:         cfg.ReadHeaderTimeout,
		ReadTimeout:               cfg.ReadTimeout,
		IdleTimeout:               cfg.IdleTimeout,
		MaxBodyBytes:              cfg.MaxBodyBytes,
		ImportMaxBytes:            cfg.ImportMaxBytes,
		MessageMaxBodyBytes:       cfg.MessageMaxBodyBytes,
		ImportTimeout:             cfg.ImportTimeout,
		WriteTimeout:              cfg.WriteTimeout,
		APIRatePerSecond:          cfg.APIRatePerSecond,
		APIRateBurst:              cfg.APIRateBurst,
		AuthFailureRatePerSecond:  cfg.AuthFailureRatePerSecond,
		AuthFailureBurst:          cfg.AuthFailureBurst,
		SignInEmailFailureRate:    cfg.SignInEmailFailureRate,
		SignInEmailFailureBurst:   cfg.SignInEmailFailureBurst,
		OptinAddrRatePerSecond:    cfg.OptinAddrRatePerSecond,
		OptinAddrBurst:            cfg.OptinAddrBurst,
		OptinAccountRatePerSecond: cfg.OptinAccountRatePerSecond,
		OptinAccountBurst:         cfg.OptinAccountBurst,
		MaxInFlight:               cfg.MaxInFlight(runtime.GOMAXPROCS(0)),
		APIQueueWait:              cfg.APIQueueWait,
		APIQueueMax:               cfg.QueueMax(cfg.MaxInFlight(runtime.GOMAXPROCS(0))),
		EventStreamPoll:           cfg.EventStreamPoll,
		EventStreamRecheck:        cfg.EventStreamRecheck,
		EventStreamsPerKey:        cfg.EventStreamsPerKey,
	}
}
