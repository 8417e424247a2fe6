// Package httpapi is the HTTP face of sendonce: routes, authentication, JSON in and
// out, and the one translation of application errors into RFC 9457 problems.
package httpapi

import (
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/routers"
	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apidoc"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dashboard"
	"github.com/sendonce/sendonce/internal/devinbox"
	"github.com/sendonce/sendonce/internal/dnscheck"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/idempotency"
	"github.com/sendonce/sendonce/internal/optin"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/segment"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/session"
	"github.com/sendonce/sendonce/internal/subscriber"
	"github.com/sendonce/sendonce/internal/template"
	"github.com/sendonce/sendonce/internal/tracking"
	"github.com/sendonce/sendonce/internal/transactional"
	"github.com/sendonce/sendonce/internal/unsubscribe"
	"github.com/sendonce/sendonce/internal/user"
	"github.com/sendonce/sendonce/internal/webhook"
)

// Deps is everything the API needs; run builds it once.
type Deps struct {
	Pool     *pgxpool.Pool
	Logger   *slog.Logger
	Config   config.Config
	Registry *prometheus.Registry
	Accounts *account.Service
	// OpenAPI is the contract served at GET /openapi.yaml; requests are validated
	// against it. Empty means the embedded openapi.yaml.
	OpenAPI []byte

	// Opt-outs: one-click unsubscribe (required for /u/{token}) and
	// provider webhooks (nil means built on Pool from Config).
	Unsubscribe *unsubscribe.Service
	Webhooks    *webhook.Service
	// Tenant API services; nil means built on Pool.
	Subscribers *subscriber.Service
	Campaigns   *campaign.Service
	Templates   *template.Service
	// Transactional accepts and reads single messages (POST /v1/messages); nil
	// means built on Pool with Messages.
	Transactional *transactional.Service
	Segments      *segment.Service
	// Sequences manages the accounts' sequences and tracked events; nil means built on Pool.
	Sequences *sequence.Service
	// Senders manages the accounts' senders; nil means built on Pool with the key
	// ring of Config.SecretsKey.
	Senders *sender.Service
	// Domains checks sending domains' SPF, DKIM and DMARC; nil means through
	// Config.DNSServer, results kept 5 minutes.
	Domains *dnscheck.Checker
	// Routes builds (and caches) the providers of senders for test sends; nil means
	// a router over Senders. The caller closes it.
	Routes *sender.Router
	// TestSender sends campaign test messages: the deployment's provider, built and
	// closed by the caller (cmd wires one per process). Nil means the log provider.
	TestSender campaign.Sender
	// Events serves the accounts' events and their endpoints; nil means on Pool,
	// guarding endpoint URLs as Config says.
	Events *event.Service
	// Messages builds test messages exactly as the executor builds real ones (the
	// same Message-ID key); nil means a builder with a random key (tests).
	Messages *render.Builder
	// Optin serves the public sign-up form and double opt-in confirmations; nil
	// means built on Pool with Transactional and Unsubscribe's key ring.
	Optin *optin.Service
	// Idempotency stores Idempotency-Key claims and responses; nil means on Pool.
	Idempotency *idempotency.Store
	// Now is the clock of the idempotency keys; nil means time.Now.
	Now func() time.Time
	// Listener, when set, is the process's LISTEN connection: the server hears API
	// key revocations and session sign-outs there and ends their event streams at once. The caller
	// runs it after NewServer. Nil: a stream ends at its next EventStreamRecheck
	// (it never sends an event committed after the revocation either way).
	Listener *postgres.Listener
	// Sessions signs the dashboard in; nil means on Pool with Accounts.
	Sessions *session.Service
	// Users manages the accounts' people and their sign-in; nil means on Pool with
	// Sessions, the key ring of Config.SecretsKey and TestSender for its mail.
	Users *user.Service
	// Tracking records clicks and opens and serves the stats, the web view and the
	// archive; nil means one on Pool with Unsubscribe's key ring and no flusher
	// (tests flush it themselves). run builds it and runs its flusher.
	Tracking *tracking.Service
	// DevInbox shows the log provider's last messages; nil means one over
	// TestSender when Config.Dev and TestSender is the log provider, else none.
	DevInbox *devinbox.Service
}

// Server serves the API.
type Server struct {
	Deps
	router  chi.Router
	metrics *httpMetrics
	spec    routers.Router
	limits  *rateLimits
	// inFlight bounds the API requests worked on at once (shed.go).
	inFlight *inFlight
	// authFails limits failed authentications per client address; signInFails
	// failed sign-ins per email address (or challenge).
	authFails, signInFails *addrLimits
	// signupAddrs and signupAccounts limit public sign-ups per client address and
	// per account.
	signupAddrs, signupAccounts *keyedLimits
	// idemCount counts stored idempotent responses, to pace the purge of expired keys.
	idemCount atomic.Uint64
	// trusted are the reverse proxies whose X-Forwarded-For names the client.
	trusted []netip.Prefix
	// streams counts the open event streams per API key.
	streams streamCounts
	// watch wakes the open event streams of a revoked key or ended session.
	watch streamWatch
	// dash is the dashboard; nil when it is turned off.
	dash *dashboard.Dashboard
	// reference is the API reference rendered from OpenAPI (GET /docs).
	reference apidoc.Page
}

// NewServer returns the API handler with every route of routes.go.
func NewServer(d Deps) http.Handler {
	if d.Registry == nil {
		d.Registry = prometheus.NewRegistry()
	}
	if len(d.OpenAPI) == 0 {
		d.OpenAPI = sendonce.OpenAPI
	}
	if d.Subscribers == nil {
		d.Subscribers = subscriber.NewService(d.Pool)
	}
	if d.Templates == nil {
		d.Templates = template.NewService(d.Pool)
	}
	if d.Campaigns == nil {
		d.Campaigns = campaign.NewService(d.Pool)
	}
	if d.Events == nil {
		d.Events = event.NewService(d.Pool, event.Guard{
			AllowHTTP: d.Config.EventAllowHTTP, AllowPrivate: d.Config.EventAllowPrivate})
		if d.Config.EventEndpointsPerAccount > 0 {
			d.Events.MaxEndpoints = d.Config.EventEndpointsPerAccount
		}
	}
	// A Config built by hand (tests) may leave the stream's settings zero.
	if d.Config.EventStreamRecheck <= 0 {
		d.Config.EventStreamRecheck = 5 * time.Second
	}
	if d.Config.EventStreamsPerKey <= 0 {
		d.Config.EventStreamsPerKey = 10
	}
	if d.Sequences == nil {
		d.Sequences = sequence.NewService(d.Pool)
	}
	if d.Segments == nil {
		d.Segments = segment.NewService(d.Pool, d.Config.SegmentTimeout)
	}
	if d.Senders == nil {
		keys := d.Config.SecretsKey
		if len(keys) == 0 {
			// Only tests get here (run always passes Senders): a random key.
			keys = []string{sender.NewKeyRingEntry("test")}
		}
		ring, err := sender.ParseKeyRing(keys)
		if err != nil {
			panic("httpapi: " + err.Error()) // run validates it first
		}
		d.Senders = sender.NewService(d.Pool, ring, sender.WithGuard(egress.Guard{AllowPrivate: d.Config.EventAllowPrivate}),
			sender.WithSMTPChunking(d.Config.SMTPChunking))
	}
	if d.Routes == nil {
		d.Routes = sender.NewRouter(d.Senders, d.Logger)
	}
	if d.Domains == nil {
		d.Domains = &dnscheck.Checker{Resolver: dnscheck.NewResolver(d.Config.DNSServer), CacheTTL: 5 * time.Minute}
	}
	if d.TestSender == nil {
		d.TestSender = provider.NewLog(d.Logger)
	}
	if d.Messages == nil {
		d.Messages = render.NewRandomBuilder()
	}
	if d.Transactional == nil {
		d.Transactional = transactional.NewService(d.Pool, d.Messages)
	}
	if d.Idempotency == nil {
		d.Idempotency = idempotency.NewStore(d.Pool)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Sessions == nil {
		d.Sessions = session.NewService(d.Pool, d.Accounts)
	}
	if d.Users == nil {
		ring, err := sender.ParseKeyRing(d.Config.SecretsKey)
		if err != nil || ring.Empty() {
			// Only tests get here (run always passes Users): a random key.
			ring, _ = sender.ParseKeyRing([]string{sender.NewKeyRingEntry("test")})
		}
		d.Users = user.NewService(d.Pool, d.Sessions, ring, d.TestSender, user.Options{PublicURL: d.Config.PublicURL,
			From: d.Config.SystemFrom, FromName: d.Config.SystemFromName, Logger: d.Logger})
	}
	if lp, ok := d.TestSender.(*provider.Log); ok && d.DevInbox == nil && d.Config.Dev {
		d.DevInbox = devinbox.New(d.Pool, lp.KeepLast(devInboxSize))
	}
	spec, err := newSpecRouter(d.OpenAPI)
	if err != nil {
		// The document is embedded and a test loads it: this is a build defect.
		panic(err)
	}
	s := &Server{Deps: d, router: chi.NewRouter(), metrics: newHTTPMetrics(d.Registry), spec: spec,
		limits:      newRateLimits(d.Config.APIRatePerSecond, d.Config.APIRateBurst),
		inFlight:    newInFlight(d.Config.MaxInFlight(runtime.GOMAXPROCS(0)), d.Config.APIQueueWait, d.Registry),
		authFails:   newAddrLimits(d.Config.AuthFailureRatePerSecond, d.Config.AuthFailureBurst),
		signInFails: newAddrLimits(d.Config.SignInEmailFailureRate, d.Config.SignInEmailFailureBurst)}
	d.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sendonce_event_streams_open", Help: "Event streams (SSE) open in this process.",
	}, s.streams.open))
	// Config.Validate refuses a bad entry at start-up; one that reaches here anyway
	// trusts nothing rather than something.
	s.trusted, _ = d.Config.TrustedProxyPrefixes()
	if s.reference, err = apidoc.Render(d.OpenAPI); err != nil {
		panic(err) // the same document loaded above: a build defect
	}
	if !d.Config.DashboardOff {
		s.dash = dashboard.New()
	}
	if d.Listener != nil {
		d.Listener.Handle(postgres.AuthorityChannel, s.watch.ended, s.watch.wakeAll)
	}
	s.optoutDefaults()
	s.trackingDefaults()
	s.optinDefaults()
	s.routes()
	return s.router
}

// apiHandler is a handler that returns its error instead of writing it.
type apiHandler func(w http.ResponseWriter, r *http.Request) error

// handle adapts an apiHandler: a returned error is written as a problem.
func (s *Server) handle(h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			writeError(w, r, s.Logger, err)
		}
	}
}

// HTTPServer is the http.Server for h with the timeouts of c: headers, the whole
// request and the response each have a bound, so a client that sends half a body
// and stalls (slowloris) is cut at ReadTimeout. The import route extends both
// deadlines to ImportTimeout for itself (bodyLimit).
func HTTPServer(c config.HTTP, h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: c.ReadHeaderTimeout, ReadTimeout: c.ReadTimeout,
		WriteTimeout: c.WriteTimeout, IdleTimeout: c.IdleTimeout}
}
