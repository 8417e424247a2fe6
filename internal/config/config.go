// Package config loads the service configuration from SENDONCE_* environment
// variables, once, in main. Nothing reads the environment after that.
package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// Config is every setting, grouped in sections. The sections are embedded so the
// variable names stay flat: SENDONCE_TICK, not SENDONCE_EXECUTOR_TICK.
type Config struct {
	Database
	HTTP
	Executor
	Providers
	Unsubscribe
	Webhooks
	Events
	Audience
	Optin
	Operator
	Media
	Log
}

// Media settings: where the media library keeps images' bytes (docs/media.md).
type Media struct {
	// MediaStorage is fs (a directory, MediaDir), s3 (an S3-compatible bucket)
	// or db (in PostgreSQL, beside each image's row). Images stored before a
	// change stay where they are: a row holding its bytes is served from them.
	MediaStorage string `split_words:"true" default:"fs"`
	MediaDir     string `split_words:"true" default:"media"`

	MediaS3Endpoint  string `envconfig:"MEDIA_S3_ENDPOINT"`
	MediaS3Bucket    string `envconfig:"MEDIA_S3_BUCKET"`
	MediaS3Region    string `envconfig:"MEDIA_S3_REGION"`
	MediaS3AccessKey string `envconfig:"MEDIA_S3_ACCESS_KEY"`
	MediaS3SecretKey string `envconfig:"MEDIA_S3_SECRET_KEY"`
	MediaS3Prefix    string `envconfig:"MEDIA_S3_PREFIX"`
	// MediaS3Insecure speaks http to the endpoint (a MinIO on the same host);
	// MediaS3PathStyle puts the bucket in the path, not the host name.
	MediaS3Insecure  bool `envconfig:"MEDIA_S3_INSECURE" default:"false"`
	MediaS3PathStyle bool `envconfig:"MEDIA_S3_PATH_STYLE" default:"false"`
}

// Operator settings: the operator API (accounts as tenants) and the purge of
// deleted accounts.
type Operator struct {
	// OperatorKeyHash is the hex SHA-256 of the operator key (`sendonce operator
	// key` makes both); empty turns the operator API off (every request 401).
	OperatorKeyHash string `split_words:"true"`
	// AccountPurgeBatch rows go per statement when a deleted account's rows are
	// removed, AccountPurgePause between two statements; AccountPurgeInterval is
	// how often the purger looks for a deleted account when it found none.
	AccountPurgeBatch    int32         `split_words:"true" default:"1000"`
	AccountPurgePause    time.Duration `split_words:"true" default:"20ms"`
	AccountPurgeInterval time.Duration `split_words:"true" default:"1m"`
}

// Optin settings: the public sign-up form and double opt-in.
type Optin struct {
	// OptinLinkTTL is how long a confirmation link works.
	OptinLinkTTL time.Duration `split_words:"true" default:"168h"`
	// OptinPendingTTL is how long a sign-up may stay unconfirmed before it is purged
	// (pending memberships too); OptinPurgeInterval is how often the purge runs.
	OptinPendingTTL    time.Duration `split_words:"true" default:"720h"`
	OptinPurgeInterval time.Duration `split_words:"true" default:"1h"`
	// OptinResendInterval is the least time between two confirmations to one address.
	OptinResendInterval time.Duration `split_words:"true" default:"1h"`
	// Sign-ups per second per client address and per account (0 disables), with
	// their bursts; the buckets are per process.
	OptinAddrRatePerSecond    float64 `split_words:"true" default:"0.2"`
	OptinAddrBurst            int     `split_words:"true" default:"5"`
	OptinAccountRatePerSecond float64 `split_words:"true" default:"10"`
	OptinAccountBurst         int     `split_words:"true" default:"100"`
}

// Audience settings: segments.
type Audience struct {
	// SegmentTimeout bounds each statement of a segment preview; a predicate that
	// runs longer is refused with 422.
	SegmentTimeout time.Duration `split_words:"true" default:"5s"`
	// SegmentBuildTimeout bounds the recipient build of a campaign with a segment;
	// a build that runs longer fails the campaign (status failed, with the reason).
	SegmentBuildTimeout time.Duration `split_words:"true" default:"10m"`
	// DNSServer (host:port) answers the domain checks' lookups, and nothing else
	// is asked; empty means the system's resolver. Tenants aim these lookups:
	// where the system's resolver also answers internal zones, name a public one.
	DNSServer string `envconfig:"DNS_SERVER"`
	// DomainCheck is what campaign approval does with the From domain's SPF, DKIM
	// and DMARC: off, warn (approve, and say what fails in domain_check) or refuse
	// (422 naming /from_email while it fails).
	DomainCheck string `split_words:"true" default:"off"`
	// ComplaintRateMax pauses a sender's campaigns when its complaints ÷
	// deliveries over ComplaintWindow exceed it (0.003 is Gmail's 0.3 %); 0
	// disables the guard. ComplaintMinDelivered is the volume below which the
	// guard does not act (a few complaints in a small send say little).
	ComplaintRateMax      float64       `split_words:"true" default:"0.003"`
	ComplaintWindow       time.Duration `split_words:"true" default:"168h"`
	ComplaintMinDelivered int64         `split_words:"true" default:"1000"`
}

// Database settings.
type Database struct {
	// DatabaseURL is the PostgreSQL URL. Empty in `dev` and `bench` means: start a local server.
	DatabaseURL string `split_words:"true"`
	// DirectDatabaseURL, when set, is a connection that keeps its session (not
	// through a transaction pooler such as PgBouncer) for what needs one: the
	// migrations' advisory lock and the executor's LISTEN. Empty: DatabaseURL.
	DirectDatabaseURL string `split_words:"true"`
	// DatabaseExecMode is how pgx runs statements on DatabaseURL: cache_statement
	// (prepared and cached per connection), cache_describe, describe_exec, exec or
	// simple_protocol. Behind PgBouncer's transaction pooling before 1.21 only exec
	// and simple_protocol work. Empty: the URL's default_query_exec_mode, else cache_statement.
	DatabaseExecMode string `split_words:"true"`
	// DataDir is where `dev` keeps its local PostgreSQL cluster.
	DataDir string `split_words:"true" default:".sendonce"`
	// MaxConns caps the connection pool.
	DBMaxConns int32 `split_words:"true" default:"20"`
	// ExecutorDBConns caps the executor's own pool, apart from the API's, so a
	// burst of API requests cannot starve sending of connections (nor the reverse).
	// (The process's LISTEN connection is taken apart from it: run.go.)
	ExecutorDBConns int32 `split_words:"true" default:"8"`
}

// HTTP settings of the API server.
type HTTP struct {
	Addr string `split_words:"true" default:"127.0.0.1:8080"`
	// MetricsAddr, when set, serves /metrics on a listener of its own and not on
	// Addr, whose clients then cannot read them; empty keeps /metrics on Addr. A
	// process without the API (executor) serves its metrics only there.
	MetricsAddr     string        `split_words:"true"`
	ShutdownTimeout time.Duration `split_words:"true" default:"30s"`
	MaxBodyBytes    int64         `split_words:"true" default:"1048576"`
	ImportMaxBytes  int64         `split_words:"true" default:"67108864"`
	// MessageMaxBodyBytes is the largest body of POST /v1/messages, which may
	// carry 10 MB of attachments in base64 (about 13.4 MiB); 0 means 15 MiB.
	MessageMaxBodyBytes int64    `split_words:"true" default:"15728640"`
	CORSOrigins         []string `split_words:"true"`
	// TrustedProxies are the addresses or CIDR prefixes of the reverse proxies in
	// front of the service: for a request from one of them, the client is the
	// rightmost X-Forwarded-For address that is not itself a trusted proxy. Empty:
	// the peer address is the client (X-Forwarded-For is ignored).
	TrustedProxies []string `split_words:"true"`
	// APIRatePerSecond limits requests per API key (0 disables); APIRateBurst is the bucket.
	APIRatePerSecond float64 `split_words:"true" default:"50"`
	APIRateBurst     int     `split_words:"true" default:"100"`
	// APIMaxInFlight bounds the API requests this process works on at once; past it
	// a request waits at most APIQueueWait for a slot and is then answered 503 with
	// Retry-After, not queued. 0 derives it (MaxInFlight). Health, metrics, opt-out and sign-up pages, provider webhooks and
	// the event stream are not bounded (docs/configuration.md says why).
	APIMaxInFlight int `split_words:"true" default:"0"`
	// APIQueueWait is how long a request past APIMaxInFlight waits for a slot before
	// it is answered 503: long enough for a burst to pass, short against the answer
	// times clients expect (0: answered at once). While the queue stands (has not
	// drained in 100 ms) a request waits at most 5 ms, newest first.
	APIQueueWait time.Duration `split_words:"true" default:"100ms"`
	// APIQueueMax bounds how many requests wait for a slot at once; past it a
	// request is answered 503 at once. 0 derives it: 64 per in-flight slot.
	APIQueueMax int `split_words:"true" default:"0"`
	// AuthFailureRatePerSecond limits failed authentications per client address (0
	// disables); AuthFailureBurst is how many may fail in a row before it applies.
	AuthFailureRatePerSecond float64 `split_words:"true" default:"1"`
	AuthFailureBurst         int     `split_words:"true" default:"20"`
	// SignInEmailFailureRate limits failed sign-ins (and mailed-link requests) per
	// email address, whoever sends them (0 disables); SignInEmailFailureBurst is
	// how many may fail in a row first. Unknown addresses are limited alike, so
	// the limit tells nothing about which addresses exist.
	SignInEmailFailureRate  float64 `split_words:"true" default:"0.05"`
	SignInEmailFailureBurst int     `split_words:"true" default:"5"`
	// ReadTimeout bounds reading one request, headers and body; WriteTimeout bounds
	// writing its response. ImportTimeout replaces both for POST /v1/subscribers/import,
	// whose bodies are larger. ReadHeaderTimeout bounds the headers alone.
	ReadHeaderTimeout time.Duration `split_words:"true" default:"10s"`
	ReadTimeout       time.Duration `split_words:"true" default:"30s"`
	WriteTimeout      time.Duration `split_words:"true" default:"2m"`
	ImportTimeout     time.Duration `split_words:"true" default:"10m"`
	IdleTimeout       time.Duration `split_words:"true" default:"2m"`
	// DashboardOff turns the dashboard at /app off (SENDONCE_DASHBOARD=false), for
	// API-only deployments; the API it calls stays.
	DashboardOff Off `envconfig:"DASHBOARD"`
	// Dev is set by `sendonce dev`, never by the environment: the session cookie
	// goes without Secure (dev serves plain http on loopback), and the log
	// provider keeps the last messages for the dashboard's dev inbox.
	Dev bool `ignored:"true"`
}

// Off is a switch that is on unless set to false, so that its zero value (a
// Config literal) is "on" as the default is: SENDONCE_DASHBOARD=false makes it true.
type Off bool

// Decode reads a boolean and stores its negation.
func (o *Off) Decode(v string) error {
	on, err := strconv.ParseBool(v)
	*o = Off(!on)
	return err
}

// Executor settings of the in-process sender.
type Executor struct {
	Tick      time.Duration `split_words:"true" default:"60s"`
	Workers   int           `split_words:"true" default:"32"`
	BatchSize int           `split_words:"true" default:"50"`
	// PrefetchNonIdempotent lets campaigns under ambiguous_policy=skip sent through
	// a provider that cannot deduplicate (smtp) keep two batches claimed ahead of
	// the workers, as other campaigns do; off, they claim only for free workers.
	// On by default: measured side by side over SMTP, claiming only for free workers
	// cost 1.5x the throughput and 1.8x PostgreSQL's CPU per message, for fewer
	// unknown rows after a crash.
	PrefetchNonIdempotent bool          `split_words:"true" default:"true"`
	Lease                 time.Duration `split_words:"true" default:"2m"`
	MaxAttempts           int           `split_words:"true" default:"5"`
	BackoffBase           time.Duration `split_words:"true" default:"30s"`
	BackoffMax            time.Duration `split_words:"true" default:"1h"`
	// RatePerSecond caps all sends of this process (0: unlimited);
	// AccountRatePerSecond caps each account's sends (0: unlimited).
	RatePerSecond        float64 `split_words:"true" default:"0"`
	AccountRatePerSecond float64 `split_words:"true" default:"0"`
	// SendRetention deletes the per-recipient send rows of campaigns finished longer
	// ago than this, keeping their counts (0: keep every row).
	SendRetention time.Duration `split_words:"true" default:"0"`
	// MessageRetention deletes the settled transactional messages accepted longer
	// ago than this, with their send rows (0: keep every message); a message's
	// Idempotency-Key holds for as long as the message exists.
	MessageRetention time.Duration `split_words:"true" default:"0"`
	// SequenceRetention deletes, for sequence enrollments that ended longer ago
	// than this, their settled step sends and step log lines, and the tracked
	// events older than this (0: keep them all). A tracked event's id is
	// idempotent for as long as the event is kept.
	SequenceRetention time.Duration `split_words:"true" default:"0"`
	// AuditRetention deletes audit log entries older than this (0: keep them all).
	AuditRetention time.Duration `split_words:"true" default:"0"`
	// Heartbeat is how often an executor refreshes its liveness row; one silent for
	// three heartbeats is dead, and its in-flight rows are rescued.
	Heartbeat time.Duration `split_words:"true" default:"2s"`
	// StartupGrace is how old the claim of a row stamped with no executor (made by a
	// release before liveness, during a rolling upgrade) must be before its rows are
	// rescued as a dead executor's, instead of when their lease ends.
	StartupGrace time.Duration `split_words:"true" default:"30s"`
	// MessageSweep is how often an executor looks, in one statement for every
	// account, for transactional messages that became due without a NOTIFY
	// (rescued, released, a lost notification, a send_at or retry time).
	MessageSweep time.Duration `split_words:"true" default:"5s"`
	// MessageHoldMax is how long a transactional message waits for a sender that
	// fails on its credentials or setup (paused) before it fails with the reason.
	MessageHoldMax time.Duration `split_words:"true" default:"24h"`
	// PoolFailback is how long a sender pool passes over a sender that refused
	// before accepting (connection refused, TLS or AUTH failure, 421, MAIL FROM
	// refused) before it tries that sender again.
	PoolFailback time.Duration `split_words:"true" default:"1m"`
	// AttachmentCacheMB caps the base64 encodings of campaigns' files the
	// executor keeps, so each file is encoded once per campaign (0: no cache).
	AttachmentCacheMB int `envconfig:"ATTACHMENT_CACHE_MB" default:"64"`
	// ClockSkew shifts this process's clock away from the database's, for the
	// skewed-clock chaos run and its tests only: every lease, heartbeat and retry
	// time is the database's, so a host clock that is off by this much must change
	// nothing. Never set it in production.
	ClockSkew time.Duration `split_words:"true" default:"0"`
}

// Providers settings: which provider sends, and its connection details.
type Providers struct {
	Provider string `split_words:"true" default:"log"`
	// SystemFrom and SystemFromName are the sender of the service's own mail
	// (invitations, sign-in links, password resets), sent through Provider;
	// empty SystemFrom means no-reply@ the host of PublicURL.
	SystemFrom     string `split_words:"true"`
	SystemFromName string `split_words:"true" default:"sendonce"`

	SMTPHost     string `split_words:"true" default:"127.0.0.1"`
	SMTPPort     int    `split_words:"true" default:"25"`
	SMTPUsername string `split_words:"true"`
	SMTPPassword string `split_words:"true"`
	// SMTPSecurity is none, starttls or tls.
	SMTPSecurity string `split_words:"true" default:"starttls"`
	SMTPConns    int    `split_words:"true" default:"8"`
	// SMTPTimeout bounds each SMTP command and the message transfer.
	SMTPTimeout time.Duration `split_words:"true" default:"30s"`
	// SMTPChunking lets a single-recipient message go with its envelope in one
	// write (BDAT, RFC 3030) to relays that offer CHUNKING; false always uses
	// DATA. It applies to the operator's relay and to every smtp sender.
	SMTPChunking bool `split_words:"true" default:"true"`

	HTTPProviderURL     string        `split_words:"true"`
	HTTPProviderAuth    string        `split_words:"true"`
	HTTPProviderTimeout time.Duration `split_words:"true" default:"30s"`
}

// Unsubscribe settings: where links point and how tokens are signed.
type Unsubscribe struct {
	// PublicURL is the base of unsubscribe and confirmation links; empty: derived
	// from the listen address (see derivePublicURL).
	PublicURL string `split_words:"true"`
	// UnsubscribeSecret is one or more `keyid:secret` pairs, comma separated; the first
	// signs new tokens, all verify. Empty in dev means a fixed development key.
	UnsubscribeSecret []string `split_words:"true"`
	UnsubscribeMailto string   `split_words:"true"`
	// SecretsKey is the key ring that encrypts sender credentials: `keyid:base64key`
	// entries (32-byte keys), comma separated; the first encrypts, all decrypt.
	SecretsKey []string `split_words:"true"`
	// MessageIDKey keys the Message-ID HMAC (at least 16 bytes); empty means a key
	// derived from the signing unsubscribe secret.
	MessageIDKey string `envconfig:"MESSAGE_ID_KEY"`
}

// Webhooks settings: how provider events become suppressions.
type Webhooks struct {
	// SoftBounceLimit soft bounces of one address within SoftBounceWindow suppress it.
	SoftBounceLimit  int           `split_words:"true" default:"3"`
	SoftBounceWindow time.Duration `split_words:"true" default:"72h"`
}

// Events settings: signed deliveries of the accounts' events to their endpoints.
type Events struct {
	// EventAllowPrivate lets deliveries reach loopback, private, link-local and
	// metadata addresses (local receivers in development; `dev` turns it on).
	EventAllowPrivate bool `split_words:"true" default:"false"`
	// EventAllowHTTP accepts http:// endpoint URLs (`dev` turns it on); otherwise https only.
	EventAllowHTTP bool `split_words:"true" default:"false"`
	// EventConcurrency is how many deliveries one process makes at once;
	// EventEndpointConcurrency caps those in flight to one endpoint across replicas.
	EventConcurrency         int `split_words:"true" default:"8"`
	EventEndpointConcurrency int `split_words:"true" default:"4"`
	// EventRetention is how long events and the delivery log are kept.
	EventRetention time.Duration `split_words:"true" default:"720h"`
	// EventStreamPoll is how often an open event stream looks for new events.
	EventStreamPoll time.Duration `split_words:"true" default:"1s"`
	// EventStreamRecheck is how often an open stream checks that its stream token
	// has not expired (the stream ends when it has). A revocation ends streams at
	// once through its notification; this check also catches one whose
	// notification was lost.
	EventStreamRecheck time.Duration `split_words:"true" default:"5s"`
	// EventStreamsPerKey caps the streams one API key (with the tokens it minted)
	// holds open at once, per process; beyond it the stream answers 429.
	EventStreamsPerKey int `split_words:"true" default:"10"`
	// EventEndpointsPerAccount caps an account's event endpoints (each event fans
	// out to every one); beyond it creation answers 409.
	EventEndpointsPerAccount int `split_words:"true" default:"20"`
}

// Log settings.
type Log struct {
	// LogLevel is debug, info, warn or error.
	LogLevel string `split_words:"true" default:"info"`
	// LogFormat is json or text.
	LogFormat string `split_words:"true" default:"json"`
}

// TrustedProxyPrefixes parses TrustedProxies: an address is a prefix of its own.
func (h HTTP) TrustedProxyPrefixes() ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(h.TrustedProxies))
	for _, v := range h.TrustedProxies {
		v = strings.TrimSpace(v)
		if p, err := netip.ParsePrefix(v); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(v)
		if err != nil {
			return nil, fmt.Errorf("configuration: SENDONCE_TRUSTED_PROXIES: %q is neither an address nor a CIDR prefix", v)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// MaxInFlight is the bound on API requests in flight: APIMaxInFlight, or when it
// is 0, two per processor Go runs on (GOMAXPROCS), and never more than the API's
// database connections (DBMaxConns). Past two per processor a request only waits
// (for a core, for a connection) and takes both from the executor; past the pool
// it waits in the pool's queue.
func (c Config) MaxInFlight(procs int) int {
	if c.APIMaxInFlight > 0 {
		return c.APIMaxInFlight
	}
	n := 2 * max(procs, 1)
	if c.DBMaxConns > 0 {
		n = min(n, int(c.DBMaxConns))
	}
	return n
}

// QueueMax is the bound on API requests waiting for an in-flight slot:
// APIQueueMax, or when it is 0, 64 per slot of inFlight (a burst of a few
// milliseconds of work per request, such as a client's fan-out, fits).
func (c Config) QueueMax(inFlight int) int {
	if c.APIQueueMax > 0 {
		return c.APIQueueMax
	}
	return 64 * max(inFlight, 1)
}

// Load reads the configuration from the environment.
func Load() (Config, error) {
	var c Config
	if err := envconfig.Process("SENDONCE", &c); err != nil {
		return Config{}, fmt.Errorf("configuration: %w", err)
	}
	c.derivePublicURL()
	return c, c.Validate()
}

// Validate checks values that envconfig cannot.
func (c Config) Validate() error {
	if _, err := c.TrustedProxyPrefixes(); err != nil {
		return err
	}
	if c.AccountPurgeBatch < 0 || c.AccountPurgeBatch > 100000 || c.AccountPurgePause < 0 {
		return fmt.Errorf("configuration: SENDONCE_ACCOUNT_PURGE_BATCH must be 0 (the default, 1000) to 100000 and SENDONCE_ACCOUNT_PURGE_PAUSE not negative")
	}
	switch {
	case c.MediaStorage == "s3" && (c.MediaS3Endpoint == "" || c.MediaS3Bucket == ""):
		return fmt.Errorf("configuration: SENDONCE_MEDIA_STORAGE=s3 needs SENDONCE_MEDIA_S3_ENDPOINT and SENDONCE_MEDIA_S3_BUCKET")
	case c.MediaStorage == "s3" && strings.Contains(c.MediaS3Endpoint, "://"):
		return fmt.Errorf("configuration: SENDONCE_MEDIA_S3_ENDPOINT is host[:port] without a scheme (SENDONCE_MEDIA_S3_INSECURE=true for http)")
	case c.MediaStorage == "fs" && c.MediaDir == "":
		return fmt.Errorf("configuration: SENDONCE_MEDIA_STORAGE=fs needs SENDONCE_MEDIA_DIR")
	case c.MediaStorage != "fs" && c.MediaStorage != "s3" && c.MediaStorage != "db" && c.MediaStorage != "":
		return fmt.Errorf("configuration: SENDONCE_MEDIA_STORAGE must be fs, s3 or db, not %q", c.MediaStorage)
	}
	switch c.DomainCheck {
	case "off", "warn", "refuse", "":
	default:
		return fmt.Errorf("configuration: SENDONCE_DOMAIN_CHECK must be off, warn or refuse, not %q", c.DomainCheck)
	}
	if c.ComplaintRateMax < 0 || c.ComplaintRateMax >= 1 || c.ComplaintMinDelivered < 1 || c.ComplaintWindow < time.Hour {
		return fmt.Errorf("configuration: SENDONCE_COMPLAINT_RATE_MAX must be in [0, 1), SENDONCE_COMPLAINT_MIN_DELIVERED at least 1 " +
			"and SENDONCE_COMPLAINT_WINDOW at least 1h")
	}
	if c.DNSServer != "" {
		if _, _, err := net.SplitHostPort(c.DNSServer); err != nil {
			return fmt.Errorf("configuration: SENDONCE_DNS_SERVER must be host:port (e.g. 1.1.1.1:53): %w", err)
		}
	}
	switch {
	case c.Workers < 1:
		return fmt.Errorf("configuration: SENDONCE_WORKERS must be at least 1")
	case c.BatchSize < 1 || c.BatchSize > 10000:
		return fmt.Errorf("configuration: SENDONCE_BATCH_SIZE must be between 1 and 10000")
	case c.AttachmentCacheMB < 0 || c.AttachmentCacheMB > 16384:
		return fmt.Errorf("configuration: SENDONCE_ATTACHMENT_CACHE_MB must be between 0 and 16384")
	case c.MaxAttempts < 1:
		return fmt.Errorf("configuration: SENDONCE_MAX_ATTEMPTS must be at least 1")
	case c.Lease < time.Second:
		return fmt.Errorf("configuration: SENDONCE_LEASE must be at least 1s")
	case c.Tick <= 0:
		return fmt.Errorf("configuration: SENDONCE_TICK must be positive")
	case c.SendRetention < 0:
		return fmt.Errorf("configuration: SENDONCE_SEND_RETENTION must not be negative (0 keeps every send row)")
	case c.MessageRetention < 0:
		return fmt.Errorf("configuration: SENDONCE_MESSAGE_RETENTION must not be negative (0 keeps every message)")
	case c.MessageRetention > 0 && c.MessageRetention < MinMessageRetention:
		// A deleted message frees its Idempotency-Key and its job id: sooner than a
		// day, a client's retry would make a second message, and a provider would
		// drop the new message as a copy of the old (Resend keeps keys 24 hours).
		return fmt.Errorf("configuration: SENDONCE_MESSAGE_RETENTION must be 0 or at least 24h "+
			"(an Idempotency-Key must outlive client retries and the providers' deduplication windows), not %s",
			c.MessageRetention)
	case c.AuditRetention < 0:
		return fmt.Errorf("configuration: SENDONCE_AUDIT_RETENTION must not be negative (0 keeps every entry)")
	case c.SequenceRetention < 0:
		return fmt.Errorf("configuration: SENDONCE_SEQUENCE_RETENTION must not be negative (0 keeps every sequence row)")
	case c.SequenceRetention > 0 && c.SequenceRetention < MinMessageRetention:
		// A deleted tracked event frees its event_id: sooner than a day, a client's
		// retry of POST /v1/track would be a new event (a new run of a sequence that
		// allows re-entry).
		return fmt.Errorf("configuration: SENDONCE_SEQUENCE_RETENTION must be 0 or at least 24h "+
			"(a tracked event's id must outlive client retries), not %s", c.SequenceRetention)
	case c.MessageHoldMax < time.Minute:
		return fmt.Errorf("configuration: SENDONCE_MESSAGE_HOLD_MAX must be at least 1m")
	case c.PoolFailback < time.Second || c.PoolFailback > 24*time.Hour:
		return fmt.Errorf("configuration: SENDONCE_POOL_FAILBACK must be between 1s and 24h")
	case c.MessageSweep < 10*time.Millisecond:
		return fmt.Errorf("configuration: SENDONCE_MESSAGE_SWEEP must be at least 10ms")
	case c.Heartbeat < 100*time.Millisecond:
		return fmt.Errorf("configuration: SENDONCE_HEARTBEAT must be at least 100ms")
	case c.StartupGrace < time.Second:
		return fmt.Errorf("configuration: SENDONCE_STARTUP_GRACE must be at least 1s")
	case c.SoftBounceLimit < 1:
		return fmt.Errorf("configuration: SENDONCE_SOFT_BOUNCE_LIMIT must be at least 1")
	case c.APIMaxInFlight < 0:
		return fmt.Errorf("configuration: SENDONCE_API_MAX_IN_FLIGHT must not be negative (0 derives it from the processors)")
	case c.APIQueueMax < 0:
		return fmt.Errorf("configuration: SENDONCE_API_QUEUE_MAX must not be negative (0 derives it from SENDONCE_API_MAX_IN_FLIGHT)")
	case c.APIQueueWait < 0 || c.APIQueueWait > 10*time.Second:
		return fmt.Errorf("configuration: SENDONCE_API_QUEUE_WAIT must be between 0 and 10s (a request that waits longer is the queueing the bound exists to avoid), not %s", c.APIQueueWait)
	case c.ExecutorDBConns < 2:
		return fmt.Errorf("configuration: SENDONCE_EXECUTOR_DB_CONNS must be at least 2 (claims and acknowledgements run beside each other)")
	case c.EventConcurrency < 1 || c.EventEndpointConcurrency < 1:
		return fmt.Errorf("configuration: SENDONCE_EVENT_CONCURRENCY and SENDONCE_EVENT_ENDPOINT_CONCURRENCY must be at least 1")
	case c.EventRetention < time.Hour:
		return fmt.Errorf("configuration: SENDONCE_EVENT_RETENTION must be at least 1h")
	case c.EventStreamPoll < 10*time.Millisecond:
		return fmt.Errorf("configuration: SENDONCE_EVENT_STREAM_POLL must be at least 10ms")
	case c.EventStreamRecheck < 10*time.Millisecond:
		return fmt.Errorf("configuration: SENDONCE_EVENT_STREAM_RECHECK must be at least 10ms")
	case c.EventStreamsPerKey < 1 || c.EventEndpointsPerAccount < 1:
		return fmt.Errorf("configuration: SENDONCE_EVENT_STREAMS_PER_KEY and SENDONCE_EVENT_ENDPOINTS_PER_ACCOUNT must be at least 1")
	case c.OptinLinkTTL < time.Minute || c.OptinPendingTTL < time.Hour || c.OptinPurgeInterval < time.Second ||
		c.OptinResendInterval < 0:
		return fmt.Errorf("configuration: SENDONCE_OPTIN_LINK_TTL must be at least 1m, SENDONCE_OPTIN_PENDING_TTL at least 1h, " +
			"SENDONCE_OPTIN_PURGE_INTERVAL at least 1s and SENDONCE_OPTIN_RESEND_INTERVAL not negative")
	case c.SoftBounceWindow <= 0:
		return fmt.Errorf("configuration: SENDONCE_SOFT_BOUNCE_WINDOW must be positive")
	}
	switch c.DatabaseExecMode {
	case "", "cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol":
	default:
		return fmt.Errorf("configuration: SENDONCE_DATABASE_EXEC_MODE must be cache_statement, cache_describe, "+
			"describe_exec, exec or simple_protocol, not %q", c.DatabaseExecMode)
	}
	switch c.Provider {
	case "log", "smtp", "http":
	default:
		return fmt.Errorf("configuration: SENDONCE_PROVIDER must be log, smtp or http, not %q", c.Provider)
	}
	if c.Provider == "http" && c.HTTPProviderURL == "" {
		return fmt.Errorf("configuration: SENDONCE_PROVIDER=http needs SENDONCE_HTTP_PROVIDER_URL")
	}
	// A worker starts a send only while a third of its lease is left, and the
	// provider call must end before the lease does: past it, a rescuer may hand the
	// row to another worker and the recipient could get two copies.
	if name, t := c.providerTimeout(); t > 0 && c.Lease < 3*t {
		return fmt.Errorf("configuration: SENDONCE_LEASE (%s) must be at least 3 × %s (%s), "+
			"so a send always ends before its lease does; raise the lease or lower the timeout", c.Lease, name, t)
	}
	return nil
}

// providerTimeout names the setting that bounds one provider call, and its value
// (0 when the provider has none). Unset timeouts take the providers' 30s default.
func (c Config) providerTimeout() (string, time.Duration) {
	orDefault := func(t time.Duration) time.Duration {
		if t <= 0 {
			return 30 * time.Second
		}
		return t
	}
	switch c.Provider {
	case "http":
		return "SENDONCE_HTTP_PROVIDER_TIMEOUT", orDefault(c.HTTPProviderTimeout)
	case "smtp":
		return "SENDONCE_SMTP_TIMEOUT", orDefault(c.SMTPTimeout)
	}
	return "", 0
}

// Default returns the configuration with every default applied and no environment
// read: for tests and tools that build a config literal.
func Default() Config {
	var c Config
	// Fields carry no envconfig name tags, so envconfig reads nothing but the prefixed
	// names; an unused prefix therefore applies the defaults alone.
	if err := envconfig.Process("SENDONCE_DEFAULTS_ONLY_UNSET", &c); err != nil {
		panic(err)
	}
	c.derivePublicURL()
	return c
}

// MinMessageRetention is the shortest SENDONCE_MESSAGE_RETENTION accepted (other
// than 0): the lifetime of the API's Idempotency-Keys and the longest provider
// deduplication window on a job id (Resend's 24 hours).
const MinMessageRetention = 24 * time.Hour

// derivePublicURL fills an unset PublicURL from the listen address, so the links
// in mail reach the process that wrote them (`sendonce dev` on another port): an
// address on every interface (":8080", "0.0.0.0", "::") gives the loopback. A
// deployment behind a proxy or a domain sets SENDONCE_PUBLIC_URL.
func (c *Config) derivePublicURL() {
	if c.PublicURL != "" {
		return
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return // Validate's listen will say what is wrong with the address
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	c.PublicURL = "http://" + net.JoinHostPort(host, port)
}
