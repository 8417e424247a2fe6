// Package webhook turns provider events (bounces, complaints, opt-outs) into
// suppressions. Each account configures endpoints, one per provider source, with
// their own credentials; a delivery is verified on its raw bytes before anything is
// parsed, and its events are applied in one transaction together with the record of
// their ids, so a replayed delivery changes nothing.
package webhook

import (
	"regexp"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Sources of events, as they appear in /v1/webhooks/{source}/{endpoint_id}.
const (
	SourceStandard = "standard"
	SourceMailgun  = "mailgun"
	SourceSendGrid = "sendgrid"
	SourcePostmark = "postmark"
	SourceSES      = "ses"
	SourceResend   = "resend"
)

// ValidSource reports whether s is a source we verify and parse.
func ValidSource(s string) bool {
	switch s {
	case SourceStandard, SourceMailgun, SourceSendGrid, SourcePostmark, SourceSES, SourceResend:
		return true
	}
	return false
}

// Kind is what an event means for us: one of the four outcomes every provider's
// event vocabulary reduces to (see parse.go).
type Kind string

// The kinds of event. Only the first four change anything.
const (
	KindUnsubscribe Kind = "unsubscribe"
	KindHardBounce  Kind = "hard_bounce"
	KindSoftBounce  Kind = "soft_bounce"
	KindComplaint   Kind = "complaint"
	KindOther       Kind = "other"
)

// Event is one provider event, normalised. Its JSON is what is stored as the
// record of the event.
type Event struct {
	// ID is the provider's event id, the replay key.
	ID string `json:"id"`
	// Type is the provider's own event type, kept for the record.
	Type  string `json:"type"`
	Kind  Kind   `json:"kind"`
	Email string `json:"email,omitempty"`
	// JobID and ProviderMessageID correlate the event to its send, when echoed.
	JobID             string `json:"job_id,omitempty"`
	ProviderMessageID string `json:"provider_message_id,omitempty"`
}

// Tolerance is how far a signed timestamp may be from now (Standard Webhooks'
// reference libraries use 5 minutes; we apply the same to Mailgun and SendGrid).
const Tolerance = 5 * time.Minute

// Options configure a Service.
type Options struct {
	// SoftBounceLimit soft bounces within SoftBounceWindow suppress an address.
	SoftBounceLimit  int
	SoftBounceWindow time.Duration
	// SNSCertHost matches the host of an SNS SigningCertURL we may fetch. Default:
	// sns.<region>.amazonaws.com; tests point it at an httptest server.
	SNSCertHost *regexp.Regexp
	// FetchCert fetches a signing certificate (PEM); default: HTTPS GET with a timeout.
	FetchCert CertFetcher
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Service manages endpoints and applies deliveries.
type Service struct {
	pool  *pgxpool.Pool
	opts  Options
	certs *certCache
}

// DefaultSNSCertHost is the allow-list of SigningCertURL hosts (AWS documents the
// URL form https://sns.<region>.amazonaws.com/SimpleNotificationService-*.pem).
var DefaultSNSCertHost = regexp.MustCompile(`^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$`)

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool, opts Options) *Service {
	if opts.SoftBounceLimit < 1 {
		opts.SoftBounceLimit = 3
	}
	if opts.SoftBounceWindow <= 0 {
		opts.SoftBounceWindow = 72 * time.Hour
	}
	if opts.SNSCertHost == nil {
		opts.SNSCertHost = DefaultSNSCertHost
	}
	if opts.FetchCert == nil {
		opts.FetchCert = httpsFetch
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Service{pool: pool, opts: opts, certs: newCertCache()}
}
