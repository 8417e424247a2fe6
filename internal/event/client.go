package event

import (
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/egress"
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
	// pass are addresses treated as public although they are not: tests stand a
	// "public" receiver on loopback to show the guard still refuses the rest.
	pass []netip.AddrPort
}

// egress is the shared outgoing-connection guard these settings describe.
func (g Guard) egress() egress.Guard {
	return egress.Guard{AllowPrivate: g.AllowPrivate, Pass: g.pass}
}

// newClient returns the HTTP client of deliveries: 15 s per attempt, no redirects
// followed (a 3xx is a failed attempt, the tenant updates the URL instead), no
// proxy, and unless AllowPrivate a dialer that checks the address it actually
// connects to, after DNS resolution (internal/egress, shared with the senders).
func (g Guard) newClient() *http.Client {
	transport := g.egress().Transport()
	transport.MaxIdleConnsPerHost = 4
	transport.ResponseHeaderTimeout = Timeout
	return g.egress().Client(transport, Timeout)
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
	if err := g.egress().CheckHost(u.Hostname()); err != nil {
		return "", bad("url " + err.Error())
	}
	return u.String(), nil
}

// refused reports whether err is the guard's refusal, for the delivery log.
func refused(err error) bool { return egress.Refused(err) }
