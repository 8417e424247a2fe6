package event

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
)

// TestEndpointURLsRefusedWhenSaved: without the development switches an endpoint
// must be https and may not name an internal address or this machine.
func TestEndpointURLsRefusedWhenSaved(t *testing.T) {
	t.Parallel()
	e := setup(t)
	strict := NewService(e.pool, Guard{})
	for _, u := range []string{"http://example.com/hook", "https://127.0.0.1/hook", "https://10.0.0.1/hook",
		"https://169.254.169.254/latest/meta-data", "https://localhost:8443/hook", "https://[::1]/hook",
		"https://user:pw@example.com/", "ftp://example.com/", "/relative", "https://192.168.1.10/"} {
		_, _, err := strict.Create(context.Background(), e.account, EndpointInput{URL: &u})
		require.True(t, apperr.Is(err, apperr.Invalid), "%s: %v", u, err)
	}
	ok := "https://hooks.example.com/sendonce"
	_, _, err := strict.Create(context.Background(), e.account, EndpointInput{URL: &ok})
	require.NoError(t, err)
}

// TestDialerRefusesInternalAddresses: the address guard checks where a delivery
// actually connects, after DNS: endpoints saved while the switch was on (or whose
// name resolves inward) are refused at connect time and nothing reaches them.
func TestDialerRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rcv := newReceiver(t)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(rcv.URL, "http://"))
	require.NoError(t, err)
	targets := []string{
		"http://127.0.0.1:" + port + "/hook",            // loopback
		"http://localhost:" + port + "/hook",            // a DNS name resolving to loopback
		"http://10.0.0.1:" + port + "/hook",             // private
		"http://169.254.169.254/latest/meta-data/iam/x", // cloud metadata
	}
	var ids []int64
	for _, u := range targets {
		ep, _ := e.endpoint(u, EndpointInput{})
		ids = append(ids, ep.ID)
	}
	e.emit(SendSent, map[string]any{"send_id": 1})
	w := e.worker(func(o *WorkerOptions) { o.Guard = Guard{AllowHTTP: true} })
	eventually(t, func() bool {
		w.round(t)
		for _, id := range ids {
			if ds := e.deliveries(id); len(ds) == 0 || ds[0].Error == nil {
				return false
			}
		}
		return true
	})
	for i, id := range ids {
		d := e.deliveries(id)[0]
		require.Equal(t, "pending", d.Status, targets[i])
		require.Nil(t, d.StatusCode, targets[i])
		require.Contains(t, *d.Error, "refused by the address guard", targets[i])
	}
	got, _ := rcv.received()
	require.Empty(t, got, "nothing reached the receiver")
}

// TestRedirectToLoopbackNotFollowed: a receiver the guard accepts (standing in for a
// public one: its exact loopback address is let through) answers 302 to another
// loopback server; the redirect is a failed attempt and the loopback server gets
// nothing. (This used to need a listener on 127.0.0.2 and skipped where there was
// none; an exact address needs nothing of the machine.)
func TestRedirectToLoopbackNotFollowed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	inner := newReceiver(t)
	outer := httptest.NewServer(http.RedirectHandler(inner.URL+"/steal", http.StatusFound))
	t.Cleanup(outer.Close)
	outerAddr := netip.MustParseAddrPort(outer.Listener.Addr().String())
	ep, _ := e.endpoint(outer.URL+"/hook", EndpointInput{})
	e.emit(SendSent, map[string]any{"send_id": 1})
	w := e.worker(func(o *WorkerOptions) {
		o.Guard = Guard{AllowHTTP: true, pass: []netip.AddrPort{outerAddr}}
	})
	eventually(t, func() bool { w.round(t); ds := e.deliveries(ep.ID); return len(ds) == 1 && ds[0].StatusCode != nil })
	d := e.deliveries(ep.ID)[0]
	require.Equal(t, http.StatusFound, *d.StatusCode)
	require.Equal(t, "pending", d.Status)
	require.Contains(t, *d.Error, "redirects are not followed")
	got, _ := inner.received()
	require.Empty(t, got)

	// And the same guard, asked to connect to loopback directly, refuses.
	u := inner.URL + "/direct"
	direct, _ := e.endpoint(u, EndpointInput{})
	e.emit(SendSent, map[string]any{"send_id": 2})
	eventually(t, func() bool { w.round(t); ds := e.deliveries(direct.ID); return len(ds) == 1 && ds[0].Error != nil })
	require.Contains(t, *e.deliveries(direct.ID)[0].Error, "refused by the address guard")
}
