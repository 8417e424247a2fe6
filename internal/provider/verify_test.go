package provider_test

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
)

// TestSMTPVerify walks connect, STARTTLS and AUTH against go-smtp and checks the
// step each failure names; nothing is sent.
func TestSMTPVerify(t *testing.T) {
	t.Parallel()
	serverTLS, roots, err := sink.SelfSignedTLS()
	require.NoError(t, err)
	withTLS := sink.NewSMTP(sink.SMTPOptions{TLSConfig: serverTLS, Users: map[string]string{"app": "s3cret"}})
	addr, err := withTLS.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { withTLS.Close() })
	plain := sink.NewSMTP(sink.SMTPOptions{})
	plainAddr, err := plain.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { plain.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := ln.Addr().String()
	ln.Close()

	verify := func(addr, security, user, pass string) error {
		host, port, _ := net.SplitHostPort(addr)
		portNum, _ := strconv.Atoi(port)
		p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: portNum, Security: security,
			Username: user, Password: pass,
			TLSConfig: &tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12}})
		require.NoError(t, err)
		defer p.Close()
		return p.Verify(context.Background())
	}
	step := func(err error) string {
		var ve *provider.VerifyError
		require.ErrorAs(t, err, &ve)
		return ve.Step
	}
	require.NoError(t, verify(addr, "starttls", "app", "s3cret"))
	require.Equal(t, "auth", step(verify(addr, "starttls", "app", "wrong")))
	require.Equal(t, "starttls", step(verify(plainAddr, "starttls", "", "")))
	require.Equal(t, "connect", step(verify(closedAddr, "starttls", "app", "s3cret")))
	// Without TLS, PLAIN refuses to put the password on the wire.
	require.Equal(t, "auth", step(verify(plainAddr, "none", "app", "s3cret")))
	require.Zero(t, withTLS.Stats().Accepted)
}
