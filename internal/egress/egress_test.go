package egress_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/egress"
)

// counting is a loopback server that counts the requests reaching it.
func counting(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if h != nil {
			h.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestGuardRefusesInternalAddressesAtDial: a POST to a loopback listener, by
// address and by a name that resolves to loopback, is refused before anything is
// sent; the development switch lets it through.
func TestGuardRefusesInternalAddressesAtDial(t *testing.T) {
	t.Parallel()
	srv, n := counting(t, nil)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	strict := egress.Guard{}.Client(nil, 5*time.Second)
	for _, u := range []string{srv.URL + "/send", "http://localhost:" + port + "/send"} {
		resp, err := strict.Post(u, "application/json", strings.NewReader(`{}`))
		if resp != nil {
			resp.Body.Close()
		}
		require.Error(t, err, u)
		require.True(t, egress.Refused(err), "%s: %v", u, err)
		require.Contains(t, err.Error(), "destination not allowed")
	}
	require.Zero(t, n.Load(), "nothing reached the loopback listener")

	dev := egress.Guard{AllowPrivate: true}.Client(nil, 5*time.Second)
	resp, err := dev.Post(srv.URL+"/send", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.EqualValues(t, 1, n.Load())
}

// TestGuardDoesNotFollowRedirects: a destination the guard accepts (an exact
// loopback address let through, standing in for a public server) redirects to
// another loopback server; the 302 is the answer and the target gets nothing.
func TestGuardDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	inner, n := counting(t, nil)
	outer, _ := counting(t, http.RedirectHandler(inner.URL+"/steal", http.StatusFound))
	g := egress.Guard{Pass: []netip.AddrPort{netip.MustParseAddrPort(outer.Listener.Addr().String())}}
	resp, err := g.Client(nil, 5*time.Second).Post(outer.URL, "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Zero(t, n.Load())

	// Even a client that follows redirects over the guard's transport is refused
	// at the redirect's dial.
	follow := &http.Client{Transport: g.Transport(), Timeout: 5 * time.Second}
	_, err = follow.Get(outer.URL)
	require.True(t, egress.Refused(err), "%v", err)
	require.Zero(t, n.Load())
}

// TestGuardDialsSMTPThroughTheCheck: the raw dial (SMTP's) refuses the metadata
// address and a private one without connecting, and refuses every port of an
// internal host alike, so it cannot tell open ports from closed ones.
func TestGuardDialsSMTPThroughTheCheck(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := closed.Addr().String()
	closed.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var msgs []string
	for _, addr := range []string{"169.254.169.254:25", "10.0.0.1:587", ln.Addr().String(), closedAddr} {
		_, err := egress.Guard{}.DialContext(ctx, "tcp", addr)
		require.True(t, egress.Refused(err), "%s: %v", addr, err)
		msgs = append(msgs, strings.ReplaceAll(err.Error(), addr, "ADDR"))
	}
	require.Equal(t, msgs[2], msgs[3], "an open and a closed internal port answer alike")
}

// TestTransportIgnoresProxyEnvironment: HTTPS_PROXY and friends would dial for us,
// past the check; the guard's transport uses no proxy.
func TestTransportIgnoresProxyEnvironment(t *testing.T) {
	t.Parallel()
	require.Nil(t, egress.Guard{}.Transport().Proxy)
	require.Nil(t, egress.Guard{AllowPrivate: true}.Transport().Proxy)
}

// TestCheckHost: literal internal addresses and this machine by name are refused
// when saved; public names and addresses pass (names are checked at dial time).
func TestCheckHost(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254", "192.168.1.10", "[::1]", "::ffff:127.0.0.1",
		"localhost", "db.localhost", "0.0.0.0", "100.64.0.1", "fd00::1", "LOCALHOST."} {
		require.Error(t, egress.Guard{}.CheckHost(h), h)
		require.NoError(t, egress.Guard{AllowPrivate: true}.CheckHost(h), h)
	}
	for _, h := range []string{"smtp.example.com", "93.184.216.34", "2606:4700::1111", "internal.corp"} {
		require.NoError(t, egress.Guard{}.CheckHost(h), h)
	}
	require.Error(t, egress.Guard{}.CheckURL("https://app:secret@api.example.com/"))
	require.Error(t, egress.Guard{AllowPrivate: true}.CheckURL("https://app@api.example.com/"))
	require.NoError(t, egress.Guard{}.CheckURL("https://api.example.com:8443/v1"))
}
