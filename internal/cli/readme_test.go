package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/servicetest"
)

// readmeCLIHeading introduces the README's command-line block.
const readmeCLIHeading = "**From the command line.**"

// TestREADMECLIBlock runs the README's command-line block with bash against a real
// service, as written but for two lines: the build (the binary under test is the
// one TestMain built from this source, put where the block's bin/sendonce is) and
// the placeholder URL and key of the export line. Every command must succeed, and
// the watched campaign must send to the six people of examples/people.csv.
func TestREADMECLIBlock(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), readmeCLIHeading)
	require.True(t, ok, "README.md lost %q", readmeCLIHeading)
	_, block, ok := strings.Cut(after, "```sh\n")
	require.True(t, ok, "no sh block after %q", readmeCLIHeading)
	block, _, ok = strings.Cut(block, "```\n")
	require.True(t, ok)

	const build = "go build -o bin/sendonce ./cmd/sendonce\n"
	const export = "export SENDONCE_URL=http://127.0.0.1:8080 SENDONCE_API_KEY=so_...   # from `make run`\n"
	require.True(t, strings.HasPrefix(block, build), "the block starts with the build:\n%s", block)
	require.Contains(t, block, export)

	svc := servicetest.Start(t)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "bin"), 0o755))
	require.NoError(t, os.Symlink(servicetest.Binary(), filepath.Join(dir, "bin", "sendonce")))
	examples, err := filepath.Abs("../../examples")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(examples, filepath.Join(dir, "examples")))
	script := strings.Replace(strings.TrimPrefix(block, build), export,
		"export SENDONCE_URL="+svc.URL+" SENDONCE_API_KEY="+svc.APIKey+"\n", 1)

	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+script)
	cmd.Dir = dir
	cmd.Env = append(servicetest.CleanEnv(), "SENDONCE_CONFIG="+filepath.Join(dir, "none.json"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "imported examples/people.csv: 6 inserted, 0 updated, 0 rejected")
	require.Contains(t, string(out), "sent: 6 total: 6 sent, 0 queued, 0 sending, 0 failed")
}
