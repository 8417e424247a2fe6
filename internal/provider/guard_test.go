package provider_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
)

// TestGuardedProvidersRefuseInternalDestinations: with the guard of a tenant's
// sender, every kind of provider refuses a loopback destination before a byte
// leaves: the http sender's POST, a native adapter's endpoint override, SES's
// endpoint, SMTP send and SMTP verify (which says only "destination not allowed",
// for an open port and a closed one alike). The refusal is the sender's fault
// (Config), retried later, never a failed recipient.
func TestGuardedProvidersRefuseInternalDestinations(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	relay := sink.NewSMTP(sink.SMTPOptions{})
	relayAddr, err := relay.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { relay.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := ln.Addr().String()
	ln.Close()

	strict := &egress.Guard{}
	ctx := context.Background()
	httpP, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL + "/send", Guard: strict})
	require.NoError(t, err)
	resend, err := provider.NewResend(provider.NativeSettings{Key: "k", BaseURL: srv.URL, Guard: strict})
	require.NoError(t, err)
	ses, err := provider.NewSES(provider.SESSettings{Region: "us-east-1", AccessKeyID: "a", SecretAccessKey: "b",
		BaseURL: srv.URL, Guard: strict})
	require.NoError(t, err)
	smtpAt := func(addr string) *provider.SMTP {
		host, port, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(port)
		p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: n, Security: "none", Guard: strict})
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		return p
	}
	for name, p := range map[string]provider.Provider{"http": httpP, "resend": resend, "ses": ses, "smtp": smtpAt(relayAddr)} {
		_, err := p.Send(ctx, nativeMsg())
		wantClass(t, err, provider.Temporary, 0, true, false)
		require.ErrorContains(t, err, "destination not allowed", name)
	}
	for _, addr := range []string{relayAddr, closedAddr} {
		err := smtpAt(addr).Verify(ctx)
		var ve *provider.VerifyError
		require.ErrorAs(t, err, &ve)
		require.Equal(t, "connect", ve.Step)
		require.Equal(t, "destination not allowed", ve.Err.Error(), addr)
	}
	require.Zero(t, hits.Load(), "nothing reached the HTTP listener")
	require.Zero(t, relay.Stats().Accepted, "nothing reached the relay")

	// The development switch lets the same destinations through.
	open := &egress.Guard{AllowPrivate: true}
	httpP, err = provider.NewHTTP(provider.HTTPSettings{URL: srv.URL + "/send", Guard: open})
	require.NoError(t, err)
	_, err = httpP.Send(ctx, nativeMsg())
	require.NoError(t, err)
	require.EqualValues(t, 1, hits.Load())
}

// TestGuardedHTTPSenderDoesNotFollowARedirectInward: an http sender whose server
// the guard accepts (an exact loopback address let through, standing in for a
// public one) answers 307 to a loopback listener; the redirect is not followed,
// the listener gets nothing, and the 3xx is the sender's configuration problem.
func TestGuardedHTTPSenderDoesNotFollowARedirectInward(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(inner.Close)
	outer := httptest.NewServer(http.RedirectHandler(inner.URL+"/steal", http.StatusTemporaryRedirect))
	t.Cleanup(outer.Close)
	g := &egress.Guard{Pass: []netip.AddrPort{netip.MustParseAddrPort(outer.Listener.Addr().String())}}
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: outer.URL + "/send", Guard: g})
	require.NoError(t, err)
	_, err = p.Send(context.Background(), nativeMsg())
	wantClass(t, err, provider.Temporary, 0, false, false)
	require.Zero(t, hits.Load())
}
