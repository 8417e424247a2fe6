// Package httpapitest builds the API for tests: the real services on a test
// database, from a configuration, the way run builds them for the process. Only
// tests import it.
package httpapitest

import (
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
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

// Deps builds every service of the API on pool from cfg, as run does, with what a
// test cannot have filled in: a random unsubscribe key and secrets key when cfg
// has none (a key nobody knows verifies nothing it did not sign), a Message-ID key
// of its own, the log provider for test sends, a discarding logger and a fresh
// registry. Nothing runs the tracker's flusher: a test flushes it itself. The
// sender router is closed when the test ends.
func Deps(t testing.TB, pool *pgxpool.Pool, cfg config.Config) httpapi.Deps {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pairs := cfg.UnsubscribeSecret
	if len(pairs) == 0 {
		pairs = []string{"test:" + rand.Text()}
	}
	keys, err := token.NewRing(pairs)
	if err != nil {
		t.Fatalf("httpapitest: unsubscribe secret: %v", err)
	}
	secrets := cfg.SecretsKey
	if len(secrets) == 0 {
		secrets = []string{sender.NewKeyRingEntry("test")}
	}
	ring, err := sender.ParseKeyRing(secrets)
	if err != nil {
		t.Fatalf("httpapitest: secrets key: %v", err)
	}
	senders := sender.NewService(pool, ring, sender.WithGuard(egress.Guard{AllowPrivate: cfg.EventAllowPrivate}),
		sender.WithSMTPChunking(cfg.SMTPChunking))
	routes := sender.NewRouter(senders, log)
	t.Cleanup(func() { _ = routes.Close() })
	mb := render.NewRandomBuilder()
	reference, err := apidoc.Render(sendonce.OpenAPI)
	if err != nil {
		t.Fatalf("httpapitest: API reference: %v", err)
	}
	opKey, err := operator.ParseKeyHash(cfg.OperatorKeyHash)
	if err != nil {
		t.Fatalf("httpapitest: %v", err)
	}
	campaigns := campaign.NewService(pool)
	campaigns.Messages = mb
	accounts := account.NewService(pool)
	messages := transactional.NewService(pool, mb)
	events := event.NewService(pool, event.Guard{AllowHTTP: cfg.EventAllowHTTP, AllowPrivate: cfg.EventAllowPrivate})
	if cfg.EventEndpointsPerAccount > 0 {
		events.MaxEndpoints = cfg.EventEndpointsPerAccount
	}
	signer := unsubscribe.NewSigner(keys)
	hooks := webhook.NewService(pool, webhook.Options{
		SoftBounceLimit: cfg.SoftBounceLimit, SoftBounceWindow: cfg.SoftBounceWindow,
	})
	d := httpapi.Deps{
		Pool: pool, Logger: log, Registry: prometheus.NewRegistry(), OpenAPI: sendonce.OpenAPI,
		Reference: reference, Dashboard: dashboard.New(),
		Accounts:      accounts,
		Operator:      operator.API{Service: operator.NewService(pool, accounts), Key: opKey},
		Unsubscribe:   unsubscribe.NewService(pool, signer),
		Webhooks:      webhook.API{Service: hooks},
		Subscribers:   subscriber.NewService(pool),
		Suppressions:  suppression.API{Pool: pool},
		Campaigns:     campaigns,
		Templates:     template.API{Service: template.NewService(pool)},
		Media:         media.API{Service: media.NewService(pool), PublicURL: cfg.PublicURL},
		Layouts:       layout.API{Service: layout.NewService(pool)},
		Lint:          contentlint.API{},
		Transactional: messages,
		Segments:      segment.API{Service: segment.NewService(pool, cfg.SegmentTimeout)},
		Sequences:     sequence.NewService(pool),
		Senders:       sender.API{Service: senders},
		DKIM:          dkim.API{Service: senders.DKIM()},
		Routes:        campaign.Routes{Router: routes},
		Domains:       dnscheck.API{Checker: &dnscheck.Checker{Resolver: dnscheck.NewResolver(cfg.DNSServer), CacheTTL: 5 * time.Minute}},
		TestSender:    provider.NewLog(log),
		Events:        events,
		Optin: optin.API{Service: optin.NewService(pool, messages, keys, optin.Options{
			PublicURL: cfg.PublicURL, LinkTTL: cfg.OptinLinkTTL, ResendEvery: cfg.OptinResendInterval})},
		Idempotency: idempotency.NewStore(pool),
		Sessions:    session.NewService(pool, accounts),
		Audit:       audit.NewService(pool),
		Tracking:    tracking.API{Service: tracking.New(pool, tracking.NewTokens(keys, cfg.PublicURL), tracking.Config{}, log)},
	}
	d.Bounces = bounce.API{Service: bounce.NewService(pool, ring, bounce.NewVERP(keys), hooks,
		bounce.Options{Guard: egress.Guard{AllowPrivate: cfg.EventAllowPrivate}})}
	erased := suppression.NewErased(keys)
	d.Subscribers.Erased, d.Transactional.Erased = erased, erased
	d.Erasure = erasure.API{Service: erasure.NewService(pool, erased)}
	d.Users = user.NewService(pool, d.Sessions, ring, d.TestSender, user.Options{PublicURL: cfg.PublicURL,
		From: cfg.SystemFrom, FromName: cfg.SystemFromName, Logger: log})
	d.SSO = sso.API{Service: sso.NewService(pool, ring, d.Users, d.Sessions, sso.Options{PublicURL: cfg.PublicURL,
		Guard: egress.Guard{AllowPrivate: cfg.EventAllowPrivate}, AllowHTTP: cfg.EventAllowHTTP, Logger: log})}
	d.People, d.Exports = person.API{Service: person.NewService(pool)}, export.NewService(pool)
	d.Reports = report.API{Service: report.NewService(pool, d.Campaigns)}
	return d
}

// Options copies the configuration values the API reads, as run does (a test in
// cmd/sendonce holds the two copies equal).
func Options(cfg config.Config) httpapi.Options {
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

// New returns the API on pool configured by cfg: the services of Deps, changed by
// each of with (which may replace any of them), then the dev inbox when cfg.Dev
// and test sends go through the log provider, as run has it.
func New(t testing.TB, pool *pgxpool.Pool, cfg config.Config, with ...func(*httpapi.Deps)) http.Handler {
	t.Helper()
	d := Deps(t, pool, cfg)
	before := d
	for _, w := range with {
		w(&d)
	}
	// A hook that swaps the deployment's provider swaps where the service's own
	// mail (invitations, sign-in links) goes, as run builds them from one provider.
	if d.TestSender != before.TestSender && d.Users == before.Users {
		ring, _ := sender.ParseKeyRing([]string{sender.NewKeyRingEntry("test")})
		d.Users = user.NewService(pool, d.Sessions, ring, d.TestSender, user.Options{PublicURL: cfg.PublicURL,
			From: cfg.SystemFrom, FromName: cfg.SystemFromName, Logger: d.Logger})
	}
	var inbox *devinbox.Service
	if lp, ok := d.TestSender.(*provider.Log); ok && cfg.Dev && d.DevInbox == nil {
		inbox = devinbox.OverLog(pool, lp)
		d.DevInbox = devinbox.API{Service: inbox}
	}
	// A hook may replace a service: the erased-address hasher follows it, and the
	// erasure forgets what the dev inbox holds, as run wires them.
	erased := suppression.NewErased(d.Unsubscribe.Signer().Ring())
	if d.Subscribers.Erased == nil {
		d.Subscribers.Erased = erased
	}
	if d.Transactional.Erased == nil {
		d.Transactional.Erased = erased
	}
	if e, ok := d.Erasure.(erasure.API); ok && inbox != nil && e.Memory == nil {
		e.Memory = inbox
	}
	h, err := httpapi.NewServer(d, Options(cfg))
	if err != nil {
		t.Fatalf("httpapitest: %v", err)
	}
	return h
}
