package validate

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// root is the repository, two folders up from this module.
var root = filepath.Join("..", "..")

func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	require.NoError(t, err)
	return string(b)
}

// readmeSettings returns the SENDONCE_* variables of the configuration
// table: the names a deployment file may set.
func readmeSettings(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(SENDONCE_[A-Z0-9_]+)` \\|").FindAllStringSubmatch(readFile(t, "docs/configuration.md"), -1) {
		out[m[1]] = true
	}
	require.Greater(t, len(out), 40, "the configuration table of docs/configuration.md was not found")
	return out
}

// TestDockerignoreKeepsLocalStateOut: the build context must not carry the local
// PostgreSQL cluster and demo keys of `sendonce dev`, binaries or git history.
func TestDockerignoreKeepsLocalStateOut(t *testing.T) {
	t.Parallel()
	lines := map[string]bool{}
	for _, l := range regexp.MustCompile(`(?m)^([^#\s][^\n]*)$`).FindAllString(readFile(t, ".dockerignore"), -1) {
		lines[l] = true
	}
	for _, want := range []string{".sendonce", ".git", "bin", ".chaos"} {
		require.True(t, lines[want], ".dockerignore lacks %s", want)
	}
	docker := readFile(t, "Dockerfile")
	require.Contains(t, docker, `HEALTHCHECK`)
	require.Contains(t, docker, `CMD ["/sendonce", "healthcheck"]`)
	require.Regexp(t, `(?m)^USER nonroot`, docker)
	require.Regexp(t, `(?m)^FROM .* AS build$`, docker)
}
