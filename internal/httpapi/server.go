// Package httpapi is the HTTP face of sendonce: routes, authentication, JSON in and
// out, and the one translation of application errors into RFC 9457 problems.
package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/routers"
	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/audit"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/export"
	"github.com/sendonce/sendonce/internal/idempotency"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/session"
	"github.com/sendonce/sendonce/internal/subscriber"
	"github.com/sendonce/sendonce/internal/transactional"
	"github.com/sendonce/sendonce/internal/unsubscribe"
	"github.com/sendonce/sendonce/internal/user"
)

// Deps are the services the API serves. The caller builds each one once (run for
// the process, httpapitest for the tests) and NewServer builds none: every field
// is required unless its comment says otherwise.
type Deps struct {
	// Pool answers the readiness probe and commits the audit entries of requests
	// that wrote nothing else.
	Pool     *pgxpool.Pool
	Logger   *slog.Logger
	Registry *prometheus.Registry
	// OpenAPI is the contract served at GET /openapi.yaml; requests are validated
	// against it.
	OpenAPI []byte
	// Reference serves the API reference rendered from OpenAPI (GET /docs).
	Reference http.Handler
	// Dashboard serves the dashboard's page and assets (served unless
	// Options.DashboardOff) and the dev inbox's message frames.
	Dashboard Dashboard
	Accounts  *account.Service
	// Operator manages accounts as tenants (/operator/v1, the operator key).
	Operator Operator

	// Opt-outs: one-click unsubscribe (/u/{token}) and provider webhooks.
	Unsubscribe *unsubscribe.Service
	Webhooks    Webhooks
	Subscribers *subscriber.Service
	// Suppressions are the accounts' suppression lists.
	Suppressions Suppressions
	// Erasure erases people (the API and the preference page).
	Erasure Erasures
	// People reads a person's activity and data export.
	People People
	// Exports streams CSV and NDJSON exports.
	Exports   *export.Service
	Campaigns *campaign.Service
	// Reports reads campaign reports and account analytics.
	Reports   Reports
	Templates Templates
	// Media is the account's image library (/v1/media and the public /media/…).
	Media MediaLibrary
	// Layouts keeps the frames Markdown content is rendered into.
	Layouts Layouts
	// Lint lints an email's content (POST /v1/templates/lint).
	Lint Linter
	// Transactional accepts and reads single messages (POST /v1/messages).
	Transactional *transactional.Service
	Segments      Segments
	// Sequences manages the accounts' sequences and tracked events.
	Sequences *sequence.Service
	// Senders manages the accounts' senders.
	Senders Senders
	// Bounces keeps the accounts' bounce mailboxes.
	Bounces BounceMailboxes
	// DKIM keeps the accounts' DKIM signing keys (the Senders' own).
	DKIM DKIMKeys
	// Domains checks sending domains' SPF, DKIM and DMARC.
	Domains DomainChecker
	// Routes builds (and caches) the providers of senders for test sends. The
	// caller closes it.
	Routes SenderRoutes
	// TestSender sends campaign test messages: the deployment's provider, built and
	// closed by the caller.
	TestSender campaign.Sender
	// Events serves the accounts' events and their endpoints.
	Events *event.Service
	// Optin serves the public sign-up form and double opt-in confirmations.
	Optin SignUps
	// Idempotency stores Idempotency-Key claims and responses.
	Idempotency *idempotency.Store
	// Sessions signs the dashboard in.
	Sessions *session.Service
	// Tracking records clicks and opens and serves the stats, the web view and the
	// archive; its flusher is the caller's to run.
	Tracking Tracker
	// Audit reads the audit log (GET /v1/audit-log).
	Audit *audit.Service
	// Users manages the accounts' people and their sign-in (its mail goes through
	// the deployment's provider; TOTP secrets sealed with the credentials key ring).
	Users *user.Service
	// SSO keeps accounts' single sign-on settings and runs sign-ins through their
	// identity providers (/sso/start, /sso/callback).
	SSO SingleSignOn

	// Optional.

	// Now is the clock of the idempotency keys; nil means time.Now.
	Now func() time.Time
	// Listener, when set, is the process's LISTEN connection: the server hears API
	// key revocations and session sign-outs there and ends their event streams at once. The caller
	// runs it after NewServer. Nil: a stream ends at its next EventStreamRecheck
	// (it never sends an event committed after the revocation either way).
	Listener *postgres.Listener
	// DevInbox shows the log provider's last messages (sendonce dev); nil answers
	// its routes 404.
	DevInbox DevInbox
}

// Dashboard is the browser application (internal/dashboard) as the server mounts it.
type Dashboard interface {
	Page(w http.ResponseWriter, r *http.Request)
	// Asset writes the named asset of the version and reports whether there is one.
	Asset(w http.ResponseWriter, r *http.Request, version, name string) bool
	// Message writes a dev inbox message's HTML as the page of the dashboard's
	// sandboxed frame, with the policy that runs nothing of it.
	Message(w http.ResponseWriter, html string)
}

// DevInbox reads the messages the log provider kept (devinbox.API), each only to
// the account that sent it.
type DevInbox interface {
	List(ctx context.Context, accountID int64) ([]api.DevInboxMessage, error)
	// HTML is the HTML part of the account's message id.
	HTML(ctx context.Context, accountID, id int64) (string, error)
}

// required names the Deps fields NewServer cannot do without, so a service added
// to Deps and forgotten by a caller fails at start-up, not on the first request.
func (d Deps) required() error {
	var missing []string
	for name, set := range map[string]bool{
		"Pool": d.Pool != nil, "Logger": d.Logger != nil, "Registry": d.Registry != nil,
		"OpenAPI": len(d.OpenAPI) > 0, "Reference": d.Reference != nil, "Dashboard": d.Dashboard != nil, "Accounts": d.Accounts != nil, "Operator": d.Operator != nil, "Unsubscribe": d.Unsubscribe != nil,
		"Webhooks": d.Webhooks != nil, "Subscribers": d.Subscribers != nil, "Suppressions": d.Suppressions != nil, "Campaigns": d.Campaigns != nil,
		"Templates": d.Templates != nil, "Layouts": d.Layouts != nil, "Lint": d.Lint != nil, "Transactional": d.Transactional != nil, "Segments": d.Segments != nil,
		"Sequences": d.Sequences != nil, "Senders": d.Senders != nil, "Bounces": d.Bounces != nil, "DKIM": d.DKIM != nil, "Domains": d.Domains != nil,
		"Routes": d.Routes != nil, "TestSender": d.TestSender != nil, "Events": d.Events != nil,
		"Optin": d.Optin != nil, "Idempotency": d.Idempotency != nil,
		"Sessions": d.Sessions != nil, "Tracking": d.Tracking != nil, "Audit": d.Audit != nil, "Users": d.Users != nil, "SSO": d.SSO != nil, "Reports": d.Reports != nil,
		"Erasure": d.Erasure != nil, "People": d.People != nil, "Exports": d.Exports != nil, "Media": d.Media != nil,
	} {
		if !set {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("httpapi: Deps without %s", strings.Join(missing, ", "))
	}
	return nil
}

// Options are the configuration values the server reads; the caller copies them
// from its configuration (SENDONCE_* names in docs/configuration.md).
type Options struct {
	// PublicURL is the base of the links the server writes (unsubscribe, login).
	PublicURL string
	// Dev drops the session cookie's Secure flag (plain-HTTP localhost).
	Dev          bool
	DashboardOff bool
	// MetricsElsewhere leaves GET /metrics to its own listener (SENDONCE_METRICS_ADDR).
	MetricsElsewhere bool
	// DomainCheck is what campaign approval does with the From domain's checks.
	DomainCheck string
	CORSOrigins []string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names the client.
	TrustedProxies []netip.Prefix

	// The HTTP server's bounds (HTTPServer) and the import's own.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration
	// Request bodies.
	MaxBodyBytes        int64
	ImportMaxBytes      int64
	MessageMaxBodyBytes int64
	ImportTimeout       time.Duration
	WriteTimeout        time.Duration

	// Rate limits: per API key, failed authentications per client address, public
	// sign-ups per client address and per account (a rate of 0 disables each).
	APIRatePerSecond         float64
	APIRateBurst             int
	AuthFailureRatePerSecond float64
	AuthFailureBurst         int
	// Failed sign-ins allowed per email address (known or not), a rate and a burst.
	SignInEmailFailureRate    float64
	SignInEmailFailureBurst   int
	OptinAddrRatePerSecond    float64
	OptinAddrBurst            int
	OptinAccountRatePerSecond float64
	OptinAccountBurst         int
	// MaxInFlight bounds the requests worked on at once; past it one waits in a
	// queue of at most APIQueueMax for up to APIQueueWait for a slot.
	MaxInFlight  int
	APIQueueWait time.Duration
	APIQueueMax  int

	// Event streams: how often one looks for new events and re-checks its
	// credential, and how many one API key may hold open.
	EventStreamPoll    time.Duration
	EventStreamRecheck time.Duration
	EventStreamsPerKey int
}

// Server serves the API.
type Server struct {
	Deps
	opts    Options
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
	dash Dashboard
}

// NewServer returns the API handler with every route of routes.go, or an error
// when d lacks a service.
func NewServer(d Deps, o Options) (http.Handler, error) {
	if err := d.required(); err != nil {
		return nil, err
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	spec, err := newSpecRouter(d.OpenAPI)
	if err != nil {
		return nil, err
	}
	s := &Server{Deps: d, opts: o, router: chi.NewRouter(), metrics: newHTTPMetrics(d.Registry), spec: spec,
		limits:         newRateLimits(o.APIRatePerSecond, o.APIRateBurst),
		inFlight:       newInFlight(o.MaxInFlight, o.APIQueueMax, o.APIQueueWait, d.Registry),
		authFails:      newAddrLimits(o.AuthFailureRatePerSecond, o.AuthFailureBurst),
		signInFails:    newAddrLimits(o.SignInEmailFailureRate, o.SignInEmailFailureBurst),
		signupAddrs:    newKeyedLimits(o.OptinAddrRatePerSecond, o.OptinAddrBurst),
		signupAccounts: newKeyedLimits(o.OptinAccountRatePerSecond, o.OptinAccountBurst),
		trusted:        o.TrustedProxies}
	d.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sendonce_event_streams_open", Help: "Event streams (SSE) open in this process.",
	}, s.streams.open))
	if !o.DashboardOff {
		s.dash = d.Dashboard
	}
	if d.Listener != nil {
		d.Listener.Handle(postgres.AuthorityChannel, s.watch.ended, s.watch.wakeAll)
	}
	s.routes()
	return s.router, nil
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

// HTTPServer is the http.Server for h with the timeouts of o: headers, the whole
// request and the response each have a bound, so a client that sends half a body
// and stalls (slowloris) is cut at ReadTimeout. The import route extends both
// deadlines to ImportTimeout for itself (bodyLimit).
func HTTPServer(h http.Handler, o Options) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: o.ReadHeaderTimeout, ReadTimeout: o.ReadTimeout,
		WriteTimeout: o.WriteTimeout, IdleTimeout: o.IdleTimeout}
}
