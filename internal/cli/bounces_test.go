package cli

import (
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/emersion/go-imap/backend/memory"
	"github.com/emersion/go-imap/server"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
	"github.com/sendonce/sendonce/internal/servicetest"
)

// TestCLIBounceMailbox: `bounce-mailbox set` stores an IMAP mailbox (a real one,
// go-imap's memory backend on loopback, which the service is let reach) with the
// password read from standard input, which neither it nor `get` prints; the
// running service reads it in the background (its one message, not a report, is
// counted as other) and, the server offering IDLE, watches it (mode idle); a bad port is the API's 422; `delete` removes it.
func TestCLIBounceMailbox(t *testing.T) {
	t.Parallel()
	srv := server.New(memory.New())
	srv.AllowInsecureAuth = true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	host, port, _ := net.SplitHostPort(ln.Addr().String())

	svc := servicetest.Start(t, "SENDONCE_EVENT_ALLOW_PRIVATE=true")
	env := []string{"SENDONCE_URL=" + svc.URL, "SENDONCE_API_KEY=" + svc.APIKey}
	run := func(stdin string, args ...string) cliRun { return sendonce(t, env, stdin, args...) }

	require.NotEqual(t, 0, run("", "bounce-mailbox", "get").code, "nothing set yet")
	r := run("password\n", "bounce-mailbox", "set", "--host", host, "--port", "0", "--username", "username")
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "422")
	r = run("password\n", "bounce-mailbox", "set", "--host", host, "--port", port, "--security", "none", "--username", "username")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "username@"+host+":"+port+" (none), folder INBOX")
	require.NotContains(t, r.stdout+r.stderr, "password\n")

	var got client.BounceMailbox
	require.Eventually(t, func() bool {
		r := run("", "bounce-mailbox", "get", "--json")
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &got) == nil && got.LastPollAt != nil
	}, 60*time.Second, 500*time.Millisecond, "the service reads the mailbox")
	require.Nil(t, got.LastError)
	require.Equal(t, map[string]int64{"other": 1}, got.Processed)
	// go-imap's server offers IDLE: the reader keeps the connection and IDLEs.
	require.NotNil(t, got.Mode)
	require.Equal(t, client.Idle, *got.Mode)
	require.NotNil(t, got.LastConnectedAt)
	r = run("", "bounce-mailbox", "get")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "mode:      idle")

	r = run("", "bounce-mailbox", "delete")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotEqual(t, 0, run("", "bounce-mailbox", "get").code)
}
