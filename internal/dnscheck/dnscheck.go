// Package dnscheck checks a sending domain's DNS against what Gmail and Yahoo
// require of bulk senders since February 2024: SPF and DKIM, and DMARC published
// for the From domain and aligned with it (REFERENCE §10.3). It says what is
// missing and what to publish.
//
// The lookups are aimed by tenants (they name the domain), so they are held to
// DNS itself: every query goes to the one resolver the operator configures
// (SENDONCE_DNS_SERVER), over its Dial, never to an address taken from an
// answer; only public domains are looked up (a name under an ICANN public
// suffix: no single labels, .local, .internal, .localhost, .home.arpa, IP
// literals); the names queried are fixed by the check (the domain, the envelope
// sender's domain, _dmarc below the domain, <selector>._domainkey below the
// signing domain, selectors being DNS labels, every domain held to the same
// public-name rule); and only records
// of the kind asked for (v=spf1, DKIM keys, v=DMARC1) are echoed, never other
// TXT content. A deployment whose resolver also answers internal split-horizon
// zones should point SENDONCE_DNS_SERVER at a public recursive resolver instead.
package dnscheck

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"
)

// Status of one check.
const (
	Pass    = "pass"
	Missing = "missing"
	Invalid = "invalid"
	// Unknown: the lookup failed (the resolver did not answer).
	Unknown = "unknown"
)

// Check is the outcome of one record's check.
type Check struct {
	Status string
	// Records are the records of this kind found (SPF, DKIM or DMARC ones only).
	Records []string
	// Selector is the DKIM selector whose key was found (or the first tried).
	Selector string
	// Detail says what is wrong, or what was found, in a sentence.
	Detail string
}

// Record is a DNS record to publish.
type Record struct {
	Type, Name, Value, Why string
}

// Result is a domain's check.
type Result struct {
	Domain           string
	SPF, DKIM, DMARC Check
	// DMARCPolicy is the p= of the DMARC record found ("" when none).
	DMARCPolicy string
	// SPFAlignment and DKIMAlignment say how the envelope sender's domain (where
	// SPF is checked) and the DKIM signing domain line up with From.
	SPFAlignment, DKIMAlignment Alignment
	// Aligned: DMARC can pass: SPF passes for an aligned envelope domain that
	// authorizes the provider (or whose mechanism is not known), or DKIM has a key
	// under an aligned signing domain.
	Aligned bool
	// OK: SPF, DKIM and DMARC pass and one of them is aligned.
	OK bool
	// Publish lists what to add for what failed.
	Publish []Record
}

// Checker looks domains up through one resolver.
type Checker struct {
	// Resolver answers the lookups; NewResolver makes one bound to a server.
	Resolver *net.Resolver
	// Timeout bounds one whole check; 0 means 5s.
	Timeout time.Duration
	// CacheTTL keeps a result this long (approval checks the same From domain
	// again and again); 0 means no cache.
	CacheTTL time.Duration
	// Now is the clock of the cache; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	r  Result
	at time.Time
}

// NewResolver returns a resolver that sends every query to server (host:port)
// and nowhere else; "" means the system's resolver configuration.
func NewResolver(server string) *net.Resolver {
	if server == "" {
		return &net.Resolver{PreferGo: true}
	}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, server) // the configured server, whatever address Go asked for
	}}
}

// ErrNotPublic is a name that is not a public domain.
var ErrNotPublic = errors.New("not a public domain name: it must end in a public suffix (such as .com or .co.uk) and be a registrable name or below one")

var labelRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// selectorRe is a DKIM selector: one or more DNS labels.
var selectorRe = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$`)

// Normalize returns domain lower-cased without a final dot, or ErrNotPublic.
func Normalize(domain string) (string, error) {
	d := strings.TrimSuffix(strings.ToLower(domain), ".")
	if d == "" || len(d) > 253 {
		return "", ErrNotPublic
	}
	if _, err := netip.ParseAddr(strings.Trim(d, "[]")); err == nil {
		return "", ErrNotPublic
	}
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return "", ErrNotPublic
	}
	for _, l := range labels {
		if !labelRe.MatchString(l) {
			return "", ErrNotPublic
		}
	}
	suffix, icann := publicsuffix.PublicSuffix(d)
	if !icann || suffix == d {
		return "", ErrNotPublic
	}
	for _, reserved := range []string{"local", "localhost", "internal", "home.arpa", "arpa", "test", "invalid", "example", "onion", "lan", "corp", "home"} {
		if d == reserved || strings.HasSuffix(d, "."+reserved) {
			return "", ErrNotPublic
		}
	}
	return d, nil
}

// ValidSelector reports whether s can be a DKIM selector.
func ValidSelector(s string) bool { return len(s) <= 200 && selectorRe.MatchString(s) }

// UsualSelectors are the DKIM selectors each kind of sender usually publishes,
// tried when the caller names none. Postmark's and SES's are per account (a
// dated "…pm" selector; three random CNAME tokens): give them.
var UsualSelectors = map[string][]string{
	"resend":   {"resend"},
	"sendgrid": {"s1", "s2"},
	"mailgun":  {"k1", "mx", "smtp", "pic"},
	"postmark": {},
	"ses":      {},
	"":         {"default", "selector1", "selector2", "google", "k1", "s1", "resend"},
}

// spfInclude is the SPF mechanism each provider documents.
var spfInclude = map[string]string{
	"resend": "include:amazonses.com", "sendgrid": "include:sendgrid.net", "mailgun": "include:mailgun.org",
	"postmark": "include:spf.mtasv.net", "ses": "include:amazonses.com",
}

// Options narrow a check to how the mail is actually sent.
type Options struct {
	// Kind is the sender's type: it picks the usual DKIM selectors, the SPF
	// include the provider documents and its default envelope domain.
	Kind string
	// Selectors to try; empty means UsualSelectors[Kind].
	Selectors []string
	// EnvelopeDomain is the Return-Path (MAIL FROM) domain; "" means the one a
	// sender of Kind uses by default (envelopeDomain).
	EnvelopeDomain string
	// DKIMDomain is the signature's d= domain; "" means the From domain.
	DKIMDomain string
	// SPFMechanism authorizes the provider in SPF ("include:_spf.example.net",
	// "ip4:192.0.2.1"); "" means the one Kind documents.
	SPFMechanism string
}

// Check looks the From domain up: SPF at the envelope sender's domain, a DKIM
// key at each selector under the signing domain (the first found wins), DMARC
// at _dmarc.<domain> or, failing that, at the organizational domain's (RFC 7489
// §6.6.3), and how SPF and DKIM align with the domain as the DMARC record's
// aspf and adkim ask.
func (c *Checker) Check(ctx context.Context, domain string, o Options) (Result, error) {
	d, err := Normalize(domain)
	if err != nil {
		return Result{}, err
	}
	kind, selectors := o.Kind, o.Selectors
	if len(selectors) == 0 {
		selectors = UsualSelectors[kind]
		if selectors == nil {
			selectors = UsualSelectors[""]
		}
	}
	env, sd := envelopeDomain(kind, d), d
	if o.EnvelopeDomain != "" {
		if env, err = Normalize(o.EnvelopeDomain); err != nil {
			return Result{}, err
		}
	}
	if o.DKIMDomain != "" {
		if sd, err = Normalize(o.DKIMDomain); err != nil {
			return Result{}, err
		}
	}
	mech := strings.ToLower(o.SPFMechanism)
	if mech == "" {
		mech = spfInclude[kind]
	}
	key := d + "|" + kind + "|" + strings.Join(selectors, ",") + "|" + env + "|" + sd + "|" + mech
	if r, ok := c.cached(key); ok {
		return r, nil
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	r := Result{Domain: d}
	var tags map[string]string
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); r.SPF = c.spf(ctx, env) }()
	go func() { defer wg.Done(); r.DKIM = c.dkim(ctx, sd, selectors) }()
	go func() { defer wg.Done(); r.DMARC, r.DMARCPolicy, tags = c.dmarc(ctx, d) }()
	wg.Wait()
	r.SPFAlignment = spfAlignment(r.SPF, env, d, mech, strings.EqualFold(tags["aspf"], "s"))
	r.DKIMAlignment = dkimAlignment(r.DKIM, sd, d, strings.EqualFold(tags["adkim"], "s"))
	spfOK := r.SPF.Status == Pass && r.SPFAlignment.Aligned && (r.SPFAlignment.Authorized == nil || *r.SPFAlignment.Authorized)
	r.Aligned = spfOK || (r.DKIM.Status == Pass && r.DKIMAlignment.Aligned)
	r.OK = r.SPF.Status == Pass && r.DKIM.Status == Pass && r.DMARC.Status == Pass && r.Aligned
	r.Publish = publish(r, kind, mech)
	if r.SPF.Status != Unknown && r.DKIM.Status != Unknown && r.DMARC.Status != Unknown {
		c.store(key, r)
	}
	return r, nil
}

func (c *Checker) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Checker) cached(key string) (Result, bool) {
	if c.CacheTTL <= 0 {
		return Result{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.cache[key]
	if !ok || c.now().Sub(e.at) > c.CacheTTL {
		return Result{}, false
	}
	return e.r, true
}

func (c *Checker) store(key string, r Result) {
	if c.CacheTTL <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil || len(c.cache) > 10_000 {
		c.cache = map[string]cached{}
	}
	c.cache[key] = cached{r: r, at: c.now()}
}

// txt returns the TXT records at name: nil and no error when there are none.
func (c *Checker) txt(ctx context.Context, name string) ([]string, error) {
	recs, err := c.Resolver.LookupTXT(ctx, name+".")
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return nil, nil
	}
	return recs, err
}

func (c *Checker) spf(ctx context.Context, d string) Check {
	recs, err := c.txt(ctx, d)
	if err != nil {
		return Check{Status: Unknown, Detail: "the SPF lookup failed: " + lookupError(err)}
	}
	var spf []string
	for _, t := range recs {
		if l := strings.ToLower(t); l == "v=spf1" || strings.HasPrefix(l, "v=spf1 ") {
			spf = append(spf, t)
		}
	}
	switch len(spf) {
	case 0:
		return Check{Status: Missing, Detail: "no SPF record (TXT \"v=spf1 …\") at " + d}
	case 1:
		if strings.HasSuffix(strings.ToLower(spf[0]), "+all") {
			return Check{Status: Invalid, Records: spf, Detail: "the SPF record ends in +all: it lets every server on the internet send as " + d}
		}
		return Check{Status: Pass, Records: spf, Detail: "one SPF record"}
	}
	return Check{Status: Invalid, Records: spf, Detail: "more than one SPF record: receivers treat that as a permanent error (RFC 7208 §4.5)"}
}

func (c *Checker) dkim(ctx context.Context, d string, selectors []string) Check {
	if len(selectors) == 0 {
		return Check{Status: Missing, Detail: "no DKIM selector to look up: give the one your provider shows (dkim_selector)"}
	}
	type found struct {
		recs []string
		err  error
	}
	res := make([]found, len(selectors))
	var wg sync.WaitGroup
	for i, s := range selectors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].recs, res[i].err = c.txt(ctx, s+"._domainkey."+d)
		}()
	}
	wg.Wait()
	var failed error
	revoked := ""
	for i, s := range selectors {
		if res[i].err != nil {
			failed = res[i].err
			continue
		}
		// A key may be split over several strings of one record; LookupTXT joins them.
		for _, t := range res[i].recs {
			tags := tagList(t)
			if v, ok := tags["v"]; ok && v != "DKIM1" {
				continue
			}
			p, ok := tags["p"]
			if !ok {
				continue
			}
			if p == "" {
				revoked = s
				continue
			}
			return Check{Status: Pass, Selector: s, Records: []string{t}, Detail: "a DKIM key at " + s + "._domainkey." + d}
		}
	}
	switch {
	case revoked != "":
		return Check{Status: Invalid, Selector: revoked, Detail: "the DKIM key at " + revoked + "._domainkey." + d + " is revoked (empty p=)"}
	case failed != nil:
		return Check{Status: Unknown, Selector: selectors[0], Detail: "a DKIM lookup failed: " + lookupError(failed)}
	}
	return Check{Status: Missing, Selector: selectors[0],
		Detail: "no DKIM key at " + strings.Join(selectors, ", ") + " (as <selector>._domainkey." + d + ")"}
}

// dmarc also returns the record's tags (aspf, adkim), nil when none was found.
func (c *Checker) dmarc(ctx context.Context, d string) (Check, string, map[string]string) {
	names := []string{"_dmarc." + d}
	if org, err := publicsuffix.EffectiveTLDPlusOne(d); err == nil && org != d {
		names = append(names, "_dmarc."+org)
	}
	for _, name := range names {
		recs, err := c.txt(ctx, name)
		if err != nil {
			return Check{Status: Unknown, Detail: "the DMARC lookup failed: " + lookupError(err)}, "", nil
		}
		var dm []string
		for _, t := range recs {
			if strings.HasPrefix(strings.ReplaceAll(t, " ", ""), "v=DMARC1") {
				dm = append(dm, t)
			}
		}
		switch len(dm) {
		case 0:
			continue
		case 1:
			tags := tagList(dm[0])
			p := tags["p"]
			if !slices.Contains([]string{"none", "quarantine", "reject"}, strings.ToLower(p)) {
				return Check{Status: Invalid, Records: dm, Detail: "the DMARC record at " + name + " has no valid p= (none, quarantine or reject)"}, "", tags
			}
			return Check{Status: Pass, Records: dm, Detail: "DMARC at " + name + ", p=" + strings.ToLower(p)}, strings.ToLower(p), tags
		default:
			return Check{Status: Invalid, Records: dm, Detail: "more than one DMARC record at " + name + ": receivers ignore them all (RFC 7489 §6.6.3)"}, "", nil
		}
	}
	return Check{Status: Missing, Detail: "no DMARC record (TXT \"v=DMARC1; p=…\") at " + names[0]}, "", nil
}

// tagList parses "k=v; k=v" (DKIM and DMARC records).
func tagList(s string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		out[strings.TrimSpace(k)] = strings.Join(strings.Fields(v), "")
	}
	return out
}

// lookupError says why a lookup failed without echoing the resolver's address.
func lookupError(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsTimeout, errors.Is(err, context.DeadlineExceeded):
		return "the resolver did not answer in time"
	case errors.As(err, &dnsErr) && dnsErr.IsTemporary:
		return "the resolver answered with a temporary failure"
	}
	return "the resolver could not be asked"
}

// publish lists what to add for each failed check. Records are suggested only
// under the From domain's organization: an envelope or signing domain of the
// provider's own is not the tenant's to publish in, so a custom one is suggested.
func publish(r Result, kind, mech string) []Record {
	var out []Record
	if mech == "" {
		mech = "include:<your provider's SPF domain>"
	}
	env := r.SPFAlignment.Domain
	switch {
	case !r.SPFAlignment.Aligned:
		out = append(out, Record{Type: "TXT", Name: customEnvelope(kind, r.Domain), Value: "v=spf1 " + mech + " ~all",
			Why: "set " + customEnvelope(kind, r.Domain) + " up as the custom Return-Path (MAIL FROM) domain with your provider (it also asks for its MX or CNAME): SPF then aligns with " + r.Domain})
	case r.SPF.Status == Missing:
		out = append(out, Record{Type: "TXT", Name: env, Value: "v=spf1 " + mech + " ~all",
			Why: "Gmail and Yahoo require SPF for the envelope sender's domain; the include is the one your provider documents"})
	case r.SPF.Status == Invalid:
		out = append(out, Record{Type: "TXT", Name: env, Value: "v=spf1 … ~all",
			Why: "keep exactly one SPF record, not ending in +all: merge the mechanisms into it"})
	case r.SPFAlignment.Authorized != nil && !*r.SPFAlignment.Authorized:
		out = append(out, Record{Type: "TXT", Name: env, Value: withMechanism(r.SPF.Records[0], mech),
			Why: "the SPF record does not authorize your provider's servers"})
	}
	if r.DKIM.Status != Pass || !r.DKIMAlignment.Aligned {
		sel := r.DKIM.Selector
		if sel == "" {
			sel = "<selector>"
		}
		out = append(out, Record{Type: "TXT or CNAME", Name: sel + "._domainkey." + r.Domain,
			Value: "the DKIM public key (or CNAME) your provider shows for this domain",
			Why:   "Gmail and Yahoo require DKIM signed by the From domain (aligned with DMARC)"})
	}
	if r.DMARC.Status != Pass {
		out = append(out, Record{Type: "TXT", Name: "_dmarc." + r.Domain, Value: "v=DMARC1; p=none; rua=mailto:dmarc-reports@" + r.Domain,
			Why: "Gmail and Yahoo require a DMARC record for the From domain (p=none is enough to start)"})
	}
	return out
}

// DKIMRecords returns the DKIM key records (those with a p= tag, v=DKIM1 or no
// v=) published at <selector>._domainkey.<domain>: none and no error when there
// are none. The selector is one or more DNS labels and the domain a public one,
// as for Check; other TXT content at the name is never returned.
func (c *Checker) DKIMRecords(ctx context.Context, selector, domain string) ([]string, error) {
	d, err := Normalize(domain)
	if err != nil {
		return nil, err
	}
	if !ValidSelector(selector) {
		return nil, errors.New("a DKIM selector is DNS labels (letters, digits, hyphens, dots)")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	recs, err := c.txt(ctx, selector+"._domainkey."+d)
	if err != nil {
		return nil, errors.New(lookupError(err))
	}
	var out []string
	for _, t := range recs {
		tags := tagList(t)
		if v, ok := tags["v"]; ok && v != "DKIM1" {
			continue
		}
		if _, ok := tags["p"]; ok {
			out = append(out, t)
		}
	}
	return out, nil
}
