package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
	"github.com/sendonce/sendonce/internal/servicetest"
	"github.com/sendonce/sendonce/internal/sso/ssotest"
)

// TestCLISSO: `sso set` stores the provider (a test provider, whose discovery
// document the service fetches) with the client secret read from
// standard input, which neither it nor `sso get` ever prints; a set without
// the secret keeps the stored one; a bad issuer is the API's 422 and changes
// nothing; `sso delete` removes the settings (get is then
// an error).
func TestCLISSO(t *testing.T) {
	t.Parallel()
	// A real OpenID Connect provider on loopback (http), which the service is let reach.
	idp := ssotest.New(t)
	svc := servicetest.Start(t, "SENDONCE_EVENT_ALLOW_HTTP=true", "SENDONCE_EVENT_ALLOW_PRIVATE=true")
	env := []string{"SENDONCE_URL=" + svc.URL, "SENDONCE_API_KEY=" + svc.APIKey}
	const secret = "the-client-secret-4f1c2a"
	run := func(stdin string, args ...string) cliRun { return sendonce(t, env, stdin, args...) }

	r := run("", "sso", "get")
	require.NotEqual(t, 0, r.code, "nothing set yet")

	r = run(secret+"\n", "sso", "set", "--issuer", idp.Issuer, "--client-id", "sendonce",
		"--domain", "example.com,example.org", "--default-role", "editor", "--client-secret-stdin")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "client secret: set (never shown)")
	require.Contains(t, r.stdout, "/sso/callback")
	require.NotContains(t, r.stdout+r.stderr, secret)

	r = run("", "sso", "get", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, secret)
	var got client.SSOSettings
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Equal(t, idp.Issuer, got.IssuerUrl)
	require.Equal(t, "sendonce", got.ClientId)
	require.Equal(t, []string{"example.com", "example.org"}, got.AllowedDomains)
	require.Equal(t, client.SSOSettingsDefaultRole("editor"), got.DefaultRole)
	require.True(t, got.ClientSecretSet)
	require.True(t, got.Enabled)

	r = run("", "sso", "set", "--issuer", "ftp://login.example.com", "--client-id", "sendonce", "--domain", "example.com")
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "422 must be an https URL")
	r = run("", "sso", "set", "--issuer", idp.Issuer, "--client-id", "other", "--domain", "example.com", "--disabled")
	require.Equal(t, 0, r.code, "the stored secret is kept: %s", r.stderr)
	require.Contains(t, r.stdout, "enabled:       false")
	require.Contains(t, r.stdout, "client secret: set")
	require.NotEqual(t, 0, run("", "sso", "set", "--issuer", idp.Issuer, "--client-id", "x",
		"--client-secret-stdin").code, "an empty standard input is no secret")

	r = run("", "sso", "delete")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotEqual(t, 0, run("", "sso", "get").code, "removed")
}
