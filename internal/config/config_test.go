package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/postgres"
)

// TestLeaseMustCoverTheProviderTimeout: a lease shorter than three provider
// timeouts lets a send outlive its lease (a rescue could then hand the row to a
// second worker), so such a configuration is refused with a clear message.
func TestLeaseMustCoverTheProviderTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		provider string
		lease    time.Duration
		timeout  time.Duration
		wantErr  string
	}{
		{"defaults with http", "http", 2 * time.Minute, 30 * time.Second, ""},
		{"http lease too short", "http", 60 * time.Second, 30 * time.Second,
			"SENDONCE_LEASE (1m0s) must be at least 3 × SENDONCE_HTTP_PROVIDER_TIMEOUT (30s)"},
		{"http short lease, short timeout", "http", 3 * time.Second, time.Second, ""},
		{"defaults with smtp", "smtp", 2 * time.Minute, 30 * time.Second, ""},
		{"smtp lease too short", "smtp", 3 * time.Second, 30 * time.Second,
			"SENDONCE_LEASE (3s) must be at least 3 × SENDONCE_SMTP_TIMEOUT (30s)"},
		{"log has no timeout", "log", time.Second, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			c.Provider, c.Lease = tc.provider, tc.lease
			c.HTTPProviderURL = "http://127.0.0.1:1/send"
			c.HTTPProviderTimeout, c.SMTPTimeout = tc.timeout, tc.timeout
			err := c.Validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// TestExecutorDBConns: the executor's pool needs its LISTEN connection and at
// least one to send with; fewer is refused, the default is accepted.
func TestExecutorDBConns(t *testing.T) {
	t.Parallel()
	c := Default()
	require.Equal(t, int32(8), c.ExecutorDBConns)
	require.NoError(t, c.Validate())
	c.ExecutorDBConns = 1
	require.ErrorContains(t, c.Validate(), "SENDONCE_EXECUTOR_DB_CONNS must be at least 2")
}

// TestSendRetention: the default keeps every send row; a negative retention is refused.
func TestSendRetention(t *testing.T) {
	t.Parallel()
	c := Default()
	require.Zero(t, c.SendRetention)
	c.SendRetention = 90 * 24 * time.Hour
	require.NoError(t, c.Validate())
	c.SendRetention = -time.Hour
	require.ErrorContains(t, c.Validate(), "SENDONCE_SEND_RETENTION must not be negative")
}

// SENDONCE_TRUSTED_PROXIES takes addresses and CIDR prefixes; anything else stops
// the start with the value named.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	c := Default()
	c.TrustedProxies = []string{"10.0.0.0/8", " 192.0.2.7 ", "::ffff:198.51.100.1", "2001:db8::/32"}
	require.NoError(t, c.Validate())
	got, err := c.TrustedProxyPrefixes()
	require.NoError(t, err)
	var s []string
	for _, p := range got {
		s = append(s, p.String())
	}
	require.Equal(t, []string{"10.0.0.0/8", "192.0.2.7/32", "198.51.100.1/32", "2001:db8::/32"}, s)
	c.TrustedProxies = []string{"10.0.0.0/8", "proxy.internal"}
	require.ErrorContains(t, c.Validate(), `SENDONCE_TRUSTED_PROXIES: "proxy.internal" is neither an address nor a CIDR prefix`)
}

// SENDONCE_DATABASE_EXEC_MODE accepts exactly the modes the pool knows (PgBouncer in
// transaction pooling needs exec or simple_protocol); a typo stops the start.
func TestDatabaseExecMode(t *testing.T) {
	t.Parallel()
	c := Default()
	require.Empty(t, c.DatabaseExecMode)
	require.NoError(t, c.Validate())
	for name := range postgres.ExecModes {
		c.DatabaseExecMode = name
		require.NoError(t, c.Validate(), name)
	}
	c.DatabaseExecMode = "simple"
	require.ErrorContains(t, c.Validate(), `SENDONCE_DATABASE_EXEC_MODE must be cache_statement, cache_describe, describe_exec, exec or simple_protocol, not "simple"`)
}
