package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/servicetest"
)

// Two services saved as two profiles of one login file: whoami names the one in
// use, --profile and $SENDONCE_PROFILE pick the other, logout forgets one and
// leaves the other, and an unknown profile is a usage error.
func TestCLIProfilesWhoamiLogout(t *testing.T) {
	t.Parallel()
	prod, staging := servicetest.Start(t), servicetest.Start(t)
	conf := filepath.Join(t.TempDir(), "config.json")
	env := []string{"SENDONCE_CONFIG=" + conf}
	run := func(stdin string, args ...string) cliRun { return sendonce(t, env, stdin, args...) }

	require.Equal(t, 0, run(prod.APIKey+"\n", "login", "--url", prod.URL).code)
	r := run(staging.APIKey+"\n", "login", "--url", staging.URL, "--profile", "staging")
	require.Equal(t, 0, r.code, r.stderr)

	var who struct {
		URL     string `json:"url"`
		Profile string `json:"profile"`
	}
	r = run("", "whoami", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &who))
	require.Equal(t, prod.URL, who.URL)
	require.Equal(t, "", who.Profile)

	r = run("", "whoami", "--profile", "staging")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, staging.URL)
	require.Contains(t, r.stdout, "staging")
	r = sendonce(t, append(env, "SENDONCE_PROFILE=staging"), "", "whoami", "--json")
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &who))
	require.Equal(t, staging.URL, who.URL)

	r = run("", "whoami", "--profile", "nope")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, `no profile "nope"`)

	require.Equal(t, 0, run("", "logout").code)
	require.Equal(t, ExitUsage, run("", "whoami").code, "the default login is gone")
	require.Equal(t, 0, run("", "whoami", "--profile", "staging").code, "the other profile stays")
	require.Equal(t, 0, run("", "logout", "--profile", "staging").code)
	_, err := os.Stat(conf)
	require.True(t, os.IsNotExist(err), "nothing left: the file is removed")
	require.Equal(t, ExitUsage, run("", "logout").code)
}
