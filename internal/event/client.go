package event

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"code.dny.dev/ssrf"

	"github.com/sendonce/sendonce/internal/apperr"
)

// Timeout bounds one delivery attempt (Standard Webhooks: 15–30 s).
const Timeout = 15 * time.Second

// Guard says where deliveries may go.
type Guard struct {
	// AllowHTTP accepts http:// endpoint URLs (development); otherwise https only.
	AllowHTTP bool
	// AllowPrivate lets deliveries reach loopback, private, link-local and other
	// special-purpose addresses (development receivers on the same machine).
	AllowPrivate bool
	// allowV4 are prefixes treated as public although they are not: tests stand a
	// "public" receiver on 127.0.0.2 to show the guard still refuses the rest.
	allowV4 []netip.Prefix
}

// newClient returns the HTTP client of deliveries: 15 s per attempt, no redirects
// followed (a 3xx is a failed attempt, the tenant updates the URL instead), and
// unless AllowPrivate a dialer that checks the address it actually connects to, after
// DNS resolution, so a name resolving to an internal address (or re-resolving to one
// later) is refused too: code.dny.dev/ssrf's control function sees the address
// being dialled, so DNS rebinding cannot slip past.
func (g Guard) newClient() *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !g.AllowPrivate {
		opts := []ssrf.Option{ssrf.WithAnyPort()}
		if len(g.allowV4) > 0 {
			opts = append(opts, ssrf.WithAllowedV4Prefixes(g.allowV4...))
		}
		dialer.Control = ssrf.New(opts...).Safe
	}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would dial for us, past the guard
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: Timeout,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// checkURL validates an endpoint URL when it is saved. The dialer is the real
// guard; this refuses early what can never be delivered: another scheme, userinfo,
// and (without AllowPrivate) a literal internal address or localhost.
func (g Guard) checkURL(raw string) (string, error) {
	bad := func(msg string) error { return apperr.Invalidf("/url", "%s", msg) }
	if len(raw) > 2000 {
		return "", bad("url is at most 2000 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", bad("url must be an absolute https URL")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !g.AllowHTTP {
			return "", bad("url must be https (http is allowed only with SENDONCE_EVENT_ALLOW_HTTP=true)")
		}
	default:
		return "", bad("url must be an absolute https URL")
	}
	if u.User != nil {
		return "", bad("url must not carry credentials")
	}
	if u.Fragment != "" {
		return "", bad("url must not have a fragment")
	}
	if !g.AllowPrivate {
		host := strings.ToLower(u.Hostname())
		if host == "localhost" || strings.HasSuffix(host, ".localhost") {
			return "", bad("url must not point at this machine")
		}
		if ip, err := netip.ParseAddr(host); err == nil && !g.public(ip) {
			return "", bad("url must not point at a loopback, private, link-local or reserved address")
		}
	}
	return u.String(), nil
}

// public reports whether the guard would let a connection to ip through.
func (g Guard) public(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range g.allowV4 {
		if p.Contains(ip) {
			return true
		}
	}
	if ip.Is4() {
		for _, p := range ssrf.IPv4DeniedPrefixes {
			if p.Contains(ip) {
				return false
			}
		}
		return true
	}
	return ip.IsGlobalUnicast() && !ip.IsPrivate()
}

// refused reports whether err is the guard's refusal, for the delivery log.
func refused(err error) bool {
	return errors.Is(err, ssrf.ErrProhibitedIP) || errors.Is(err, ssrf.ErrProhibitedNetwork) ||
		errors.Is(err, ssrf.ErrProhibitedPort) || errors.Is(err, ssrf.ErrInvalidHostPort)
}
