package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
)

// TestREADMETour runs the README's API tour (the sh block under "Subscribers, lists,
// suppressions and a campaign") with bash and curl against the real service, so the
// README stays true: every curl -f in it must succeed.
func TestREADMETour(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "seq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set but %s is not on PATH: the README tour must run in CI", tool)
			}
			t.Skipf("%s not found", tool)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), "### Subscribers, lists, suppressions and a campaign")
	require.True(t, ok, "README lost its API tour section")
	_, after, ok = strings.Cut(after, "```sh\n")
	require.True(t, ok)
	script, _, ok := strings.Cut(after, "```")
	require.True(t, ok)

	pool := dbtest.New(t)
	_, key, err := account.NewService(pool).Create(context.Background(), "tour")
	require.NoError(t, err)
	base := startService(t, pool.Config().ConnString())
	script = strings.Replace(script, "BASE=http://127.0.0.1:8080", "BASE="+base, 1)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tour.sh"), []byte("set -euo pipefail\n"+script), 0o644))
	cmd := exec.Command("bash", "tour.sh")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SENDONCE_API_KEY="+key)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), `"inserted":10000`)
	require.Contains(t, string(out), `{"changed":2}`, "two subscribers, ids taken from a response, joined the beta list")
	require.Contains(t, string(out), "Idempotent-Replayed: true")
	require.Contains(t, string(out), `"current_status":"`)
	require.Contains(t, string(out), `"counts":{`)
}
