// Package sender holds each account's senders: how its mail leaves (its own SMTP
// relay, HTTP endpoint, or Resend, Postmark, SendGrid, Mailgun or Amazon SES
// account), with credentials encrypted at rest, limits, and health.
package sender

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/pacing"
)

// Types are the sender types.
var Types = []string{"smtp", "http", "resend", "postmark", "sendgrid", "mailgun", "ses"}

// Sender is a configured sender, without its credentials.
type Sender struct {
	ID       int64
	Name     string
	Type     string
	Settings Settings
	// CredentialsHint is a masked tail of the stored secret ("…f3a9"); empty when none.
	CredentialsHint string
	RatePerSecond   float64
	MaxConnections  int
	AllowedFrom     []string
	Default         bool
	// DomainLimits cap its sends per recipient domain group (internal/pacing).
	DomainLimits []pacing.DomainLimit
	// Warmup is its warm-up schedule (daily caps); nil: none.
	Warmup *pacing.Warmup
	// WarmupToday is today's (UTC) place in it; nil without a schedule.
	WarmupToday *WarmupDay
	// Idempotent says whether the provider deduplicates on our job id, so an
	// interrupted send is replayed; otherwise the campaign's ambiguous_policy applies.
	Idempotent bool
	// PausedReason is set when repeated auth/config failures paused the sender's
	// campaigns; resuming a campaign clears it.
	PausedReason *string
	PausedAt     *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// WarmupDay is one UTC day of a warm-up schedule: its cap (nil once the
// schedule is over) and the sends counted against it.
type WarmupDay struct {
	Day       time.Time
	DayNumber int
	Cap       *int
	Used      int
}

// Settings are the type-specific, non-secret settings. Its JSON is the stored
// column (senders.settings) and names the fields a type refuses.
type Settings struct {
	// smtp
	Host     string `json:"host,omitempty"`
	Port     int    `json:"port,omitempty"`
	Security string `json:"security,omitempty"` // none, starttls (default), tls
	Username string `json:"username,omitempty"`
	// DKIMSign false sends unsigned even when the From domain has an active DKIM
	// key (a relay that signs itself); nil or true signs.
	DKIMSign *bool `json:"dkim_sign,omitempty"`
	// BounceDomain, when set, puts a VERP Return-Path on each send:
	// bounces+<signed token>@<BounceDomain>, whose mail the account's bounce
	// mailbox reads (internal/bounce). Its MX must deliver there.
	BounceDomain string `json:"bounce_domain,omitempty"`
	// http: the URL that receives one POST per message.
	URL string `json:"url,omitempty"`
	// Endpoint replaces a native provider's API origin (a proxy, a test server).
	Endpoint string `json:"endpoint,omitempty"`
	// Region: ses (AWS region), mailgun and sendgrid (us or eu).
	Region string `json:"region,omitempty"`
	// Domain is the Mailgun sending domain.
	Domain string `json:"domain,omitempty"`
	// MessageStream is the Postmark stream (default outbound).
	MessageStream string `json:"message_stream,omitempty"`
	// ConfigurationSet is the SES configuration set.
	ConfigurationSet string `json:"configuration_set,omitempty"`
}

// Credentials are write-only: accepted on create and update, stored encrypted,
// never returned. Its JSON is what is encrypted, and names missing fields.
type Credentials struct {
	Password        string `json:"password,omitempty"`          // smtp
	Authorization   string `json:"authorization,omitempty"`     // http: the Authorization header value
	APIKey          string `json:"api_key,omitempty"`           // resend, sendgrid, mailgun
	ServerToken     string `json:"server_token,omitempty"`      // postmark
	AccessKeyID     string `json:"access_key_id,omitempty"`     // ses
	SecretAccessKey string `json:"secret_access_key,omitempty"` // ses
}

// secret is the credential the hint masks.
func (c Credentials) secret() string {
	for _, s := range []string{c.Password, c.Authorization, c.APIKey, c.ServerToken, c.SecretAccessKey} {
		if s != "" {
			return s
		}
	}
	return ""
}

// empty reports whether no credential was given.
func (c Credentials) empty() bool { return c == Credentials{} }

// hint masks a secret down to its last four characters, and only when it is long
// enough that four characters give little away.
func hint(s string) string {
	if len(s) < 12 {
		return "…"
	}
	return "…" + s[len(s)-4:]
}

// Input creates a sender. Its JSON names are the pointers of the problems
// storable reports (/settings/host), matching the request body.
type Input struct {
	Name           string       `json:"name"`
	Type           string       `json:"type"`
	Settings       Settings     `json:"settings"`
	Credentials    *Credentials `json:"credentials"`
	RatePerSecond  float64      `json:"rate_per_second"`
	MaxConnections int          `json:"max_connections"`
	AllowedFrom    []string     `json:"allowed_from"`
	Default        bool         `json:"default"`
	// DomainLimits and Warmup pace the sender (internal/pacing).
	DomainLimits []pacing.DomainLimit `json:"domain_limits"`
	Warmup       *pacing.Warmup       `json:"warmup"`
}

// Patch changes a sender; absent fields stay. The type cannot change.
type Patch struct {
	Name           *string      `json:"name"`
	Settings       *Settings    `json:"settings"`
	Credentials    *Credentials `json:"credentials"`
	RatePerSecond  *float64     `json:"rate_per_second"`
	MaxConnections *int         `json:"max_connections"`
	AllowedFrom    *[]string    `json:"allowed_from"`
	Default        *bool        `json:"default"`
	// DomainLimits given replace the stored ones whole (an empty list removes them).
	DomainLimits *[]pacing.DomainLimit `json:"domain_limits"`
	// Warmup given replaces the stored schedule; ClearWarmup removes it.
	Warmup      *pacing.Warmup `json:"warmup"`
	ClearWarmup bool           `json:"-"`
}

// validatePacing checks a sender's domain limits and warm-up schedule.
func validatePacing(limits []pacing.DomainLimit, w *pacing.Warmup) error {
	if err := pacing.ValidateLimits("/domain_limits", limits); err != nil {
		return err
	}
	return pacing.ValidateWarmup("/warmup", w)
}

// validate checks a whole sender (after a patch is applied); g says which
// destinations may be saved.
func validate(typ, name string, s Settings, c Credentials, rate float64, conns int, allowed []string, g egress.Guard) error {
	if l := len(strings.TrimSpace(name)); l == 0 || len(name) > 200 {
		return apperr.Invalidf("/name", "name is 1 to 200 characters")
	}
	if rate < 0 || rate > 100000 {
		return apperr.Invalidf("/rate_per_second", "rate_per_second is between 0 (unlimited) and 100000")
	}
	if conns < 0 || conns > 1000 {
		return apperr.Invalidf("/max_connections", "max_connections is between 0 (the default) and 1000")
	}
	if len(allowed) > 100 {
		return apperr.Invalidf("/allowed_from", "at most 100 addresses or domains")
	}
	for i, a := range allowed {
		if !validFromRule(a) {
			return apperr.Invalidf("/allowed_from/"+itoa(i), "not an address or a domain: %q", a)
		}
	}
	if err := validSettings(typ, s, g); err != nil {
		return err
	}
	return validCredentials(typ, c)
}

// target is where a sender's credentials go: what may not change without them.
type target struct {
	URL, Endpoint, Host string
	Port                int
	Region, Domain      string
}

func destination(s Settings) target {
	return target{URL: s.URL, Endpoint: s.Endpoint, Host: strings.ToLower(s.Host), Port: s.Port, Region: s.Region,
		Domain: strings.ToLower(s.Domain)}
}

// redacted hides the password of a URL stored before userinfo was refused.
func redacted(raw string) string {
	if !strings.Contains(raw, "@") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

func validFromRule(a string) bool {
	if len(a) == 0 || len(a) > 254 {
		return false
	}
	if strings.Contains(a, "@") {
		_, err := address.Parse(a)
		return err == nil
	}
	_, err := address.Parse("x@" + a)
	return err == nil
}

func validSettings(typ string, s Settings, g egress.Guard) error {
	bad := func(field, format string, args ...any) error {
		return apperr.Invalidf("/settings/"+field, format, args...)
	}
	allowed := map[string][]string{
		"smtp":     {"host", "port", "security", "username", "dkim_sign", "bounce_domain"},
		"http":     {"url"},
		"resend":   {"endpoint"},
		"postmark": {"endpoint", "message_stream"},
		"sendgrid": {"endpoint", "region"},
		"mailgun":  {"endpoint", "region", "domain"},
		"ses":      {"endpoint", "region", "configuration_set"},
	}[typ]
	set := map[string]bool{}
	raw, _ := json.Marshal(s)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	for k := range m {
		set[k] = true
	}
	for k := range set {
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			return bad(k, "%s does not apply to %s senders (allowed: %s)", k, typ, strings.Join(allowed, ", "))
		}
	}
	for _, f := range []struct{ name, v string }{{"host", s.Host}, {"username", s.Username}, {"url", s.URL},
		{"endpoint", s.Endpoint}, {"region", s.Region}, {"domain", s.Domain}, {"message_stream", s.MessageStream},
		{"configuration_set", s.ConfigurationSet}} {
		if len(f.v) > 500 {
			return bad(f.name, "%s is at most 500 characters", f.name)
		}
	}
	if s.Endpoint != "" && !httpURL(s.Endpoint) {
		return bad("endpoint", "endpoint must be an http:// or https:// URL")
	}
	// The dialer refuses internal addresses on every connection; what can be told
	// from the text alone (a literal internal address, localhost, a password in
	// the URL) is refused here, naming the field.
	if s.Endpoint != "" {
		if err := g.CheckURL(s.Endpoint); err != nil {
			return bad("endpoint", "endpoint %s", err)
		}
	}
	switch typ {
	case "smtp":
		if s.Host == "" {
			return bad("host", "host is required")
		}
		if s.Port < 1 || s.Port > 65535 {
			return bad("port", "port is between 1 and 65535")
		}
		if err := g.CheckHost(s.Host); err != nil {
			return bad("host", "host %s", err)
		}
		if s.Security != "" && s.Security != "none" && s.Security != "starttls" && s.Security != "tls" {
			return bad("security", "security is none, starttls or tls")
		}
		if s.BounceDomain != "" {
			if _, err := address.Parse("x@" + s.BounceDomain); err != nil || len(s.BounceDomain) > 253 ||
				!strings.Contains(s.BounceDomain, ".") || strings.ContainsAny(s.BounceDomain, "[]") {
				return bad("bounce_domain", "bounce_domain is a domain name such as bounces.example.com")
			}
		}
	case "http":
		if !httpURL(s.URL) {
			return bad("url", "url must be an http:// or https:// URL")
		}
		if err := g.CheckURL(s.URL); err != nil {
			return bad("url", "url %s", err)
		}
	case "sendgrid":
		if s.Region != "" && s.Region != "global" && s.Region != "eu" {
			return bad("region", "region is global or eu")
		}
	case "mailgun":
		if s.Domain == "" {
			return bad("domain", "domain is required")
		}
		if s.Region != "" && s.Region != "us" && s.Region != "eu" {
			return bad("region", "region is us or eu")
		}
	case "ses":
		if s.Region == "" || len(s.Region) > 32 || strings.ContainsAny(s.Region, "/:@ ") {
			return bad("region", "region is an AWS region such as us-east-1")
		}
	}
	return nil
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func validCredentials(typ string, c Credentials) error {
	bad := func(field, format string, args ...any) error {
		return apperr.Invalidf("/credentials/"+field, format, args...)
	}
	need := map[string][]string{
		"smtp": {}, "http": {}, "resend": {"api_key"}, "postmark": {"server_token"},
		"sendgrid": {"api_key"}, "mailgun": {"api_key"}, "ses": {"access_key_id", "secret_access_key"},
	}[typ]
	may := map[string][]string{"smtp": {"password"}, "http": {"authorization"}}[typ]
	raw, _ := json.Marshal(c)
	var m map[string]string
	_ = json.Unmarshal(raw, &m)
	for _, k := range need {
		if m[k] == "" {
			return bad(k, "%s is required for %s senders", k, typ)
		}
	}
	for k, v := range m {
		ok := false
		for _, a := range append(need, may...) {
			ok = ok || a == k
		}
		if !ok {
			return bad(k, "%s does not apply to %s senders", k, typ)
		}
		if len(v) > 4096 || strings.ContainsAny(v, "\r\n") {
			return bad(k, "%s is at most 4096 characters, on one line", k)
		}
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }

// AllowsFrom reports whether allowed (a sender's allowed_from: addresses and
// domains) permits sending from the address from. An empty list allows any.
// Campaigns are held to it at approval, messages when they are accepted.
func AllowsFrom(allowed []string, from string) bool {
	if len(allowed) == 0 {
		return true
	}
	from = strings.ToLower(from)
	_, domain, _ := strings.Cut(from, "@")
	for _, r := range allowed {
		if r = strings.ToLower(r); r == from || r == domain {
			return true
		}
	}
	return false
}
