// Package egress is the one guard on outgoing connections a tenant can aim: event
// deliveries, HTTP and native senders (their endpoint overrides included), SMTP
// sends and SMTP verification. It checks the address actually being dialled, after
// DNS resolution (code.dny.dev/ssrf's dialer control), so a name that resolves
// inward, or re-resolves inward later, is refused as a literal address is. Its HTTP
// clients use no proxy (a proxy would dial for us, past the check) and follow no
// redirect.
package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// Guard says where connections may go. The zero Guard allows public unicast
// addresses only, on any port.
type Guard struct {
	// AllowPrivate lets connections reach loopback, private, link-local and other
	// special-purpose addresses (development receivers and relays on this machine
	// or network). SENDONCE_EVENT_ALLOW_PRIVATE sets it.
	AllowPrivate bool
	// Pass are exact addresses let through although they are not public: tests
	// stand a "public" server on loopback beside a private one, to show the guard
	// still refuses the rest.
	Pass []netip.AddrPort
}

// ErrRefused is the guard's refusal, wrapped around the reason.
var ErrRefused = errors.New("destination not allowed")

// guardian is the address check; it allows any port, since providers and relays
// listen on many (SMTP 25, 465, 587, 2525; APIs on custom ports behind proxies).
var guardian = ssrf.New(ssrf.WithAnyPort())

// Control is a net.Dialer Control function: it refuses the connection before it is
// made when the address it is about to reach is not allowed.
func (g Guard) Control(network, address string, _ syscall.RawConn) error {
	if g.AllowPrivate {
		return nil
	}
	if ap, err := netip.ParseAddrPort(address); err == nil && slices.Contains(g.Pass, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())) {
		return nil
	}
	if err := guardian.Safe(network, address, nil); err != nil {
		return &refusal{addr: address, err: err}
	}
	return nil
}

// refusal is a refused connection: ErrRefused for errors.Is, the address and
// ssrf's reason for logs.
type refusal struct {
	addr string
	err  error
}

func (r *refusal) Error() string {
	return ErrRefused.Error() + " (" + r.addr + ": " + r.err.Error() + ")"
}

func (r *refusal) Is(target error) bool { return target == ErrRefused }

func (r *refusal) Unwrap() error { return r.err }

// Refused reports whether err is (or wraps) the guard's refusal.
func Refused(err error) bool { return errors.Is(err, ErrRefused) }

// Dialer returns a dialer that checks each address it connects to.
func (g Guard) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: g.Control}
}

// DialContext dials through the guard (for SMTP, which dials its own connections).
func (g Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return g.Dialer(10*time.Second).DialContext(ctx, network, addr)
}

// Transport returns an HTTP transport that dials through the guard and uses no
// proxy. Callers may tune its pool and timeouts.
func (g Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil, // a proxy from the environment would dial for us, past the guard
		DialContext:           g.Dialer(10 * time.Second).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Client returns an HTTP client over rt (nil: a Transport of this guard) that
// follows no redirect: the 3xx is the answer. A redirected POST could be replayed
// as a GET without its body, and a redirect is the classic way round a check made
// on the first URL only (the dialer would still refuse an internal target).
func (g Guard) Client(rt http.RoundTripper, timeout time.Duration) *http.Client {
	if rt == nil {
		rt = g.Transport()
	}
	return &http.Client{Transport: rt, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// CheckHost refuses early, when a destination is saved, what the dialer would
// refuse anyway: this machine by name (localhost) and literal addresses that are
// not public. Other names are only known at dial time. The error says why.
func (g Guard) CheckHost(host string) error {
	if g.AllowPrivate {
		return nil
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return errors.New("must not point at this machine")
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil
	}
	ip = ip.Unmap()
	for _, p := range g.Pass {
		if p.Addr() == ip {
			return nil
		}
	}
	if guardian.SafeAddr(ip) != nil {
		return errors.New("must not point at a loopback, private, link-local or reserved address")
	}
	return nil
}

// CheckURL is CheckHost on an absolute URL's host; it also refuses credentials in
// the URL (they would be stored and shown in clear; they belong in write-only
// credentials). The scheme is the caller's business.
func (g Guard) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errors.New("must be an absolute URL")
	}
	if u.User != nil {
		return errors.New("must not carry a user name or password (put credentials in credentials)")
	}
	return g.CheckHost(u.Hostname())
}
