package validate

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"
)

// loadCompose loads compose.yaml as `docker compose` would, with the given
// environment for interpolation, through the compose-spec loader (schema
// validation, interpolation, consistency checks included).
func loadCompose(t *testing.T, env map[string]string) *types.Project {
	t.Helper()
	abs, err := filepath.Abs(root)
	require.NoError(t, err)
	p, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  abs,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(abs, "compose.yaml")}},
		Environment: env,
	}, func(o *loader.Options) { o.SetProjectName("sendonce", true) })
	require.NoError(t, err)
	return p
}

func TestComposeFile(t *testing.T) {
	t.Parallel()
	p := loadCompose(t, map[string]string{})
	var names []string
	for n := range p.Services {
		names = append(names, n)
	}
	require.ElementsMatch(t, []string{"postgres", "migrate", "api", "executor", "mailpit"}, names)
	settings := readmeSettings(t)
	readme := readFile(t, "docs/deploy.md")

	// PostgreSQL is healthy before migrate runs; api and executor wait for migrate to succeed.
	require.Equal(t, types.ServiceConditionHealthy, p.Services["migrate"].DependsOn["postgres"].Condition)
	require.Equal(t, "no", p.Services["migrate"].Restart)
	require.Equal(t, types.ShellCommand{"migrate"}, p.Services["migrate"].Command)
	for _, name := range []string{"api", "executor"} {
		require.Equal(t, types.ServiceConditionCompletedSuccessfully, p.Services[name].DependsOn["migrate"].Condition, name)
	}
	require.Equal(t, types.ServiceConditionHealthy, p.Services["executor"].DependsOn["mailpit"].Condition)
	require.Equal(t, types.ShellCommand{"serve", "--executor=false"}, p.Services["api"].Command)
	require.Equal(t, types.ShellCommand{"serve", "--api=false"}, p.Services["executor"].Command)

	for _, name := range []string{"migrate", "api", "executor"} {
		s := p.Services[name]
		require.Equal(t, "sendonce:local", s.Image, name)
		require.NotNil(t, s.Build, "%s builds the image from the Dockerfile", name)
		// Every variable set is one the README documents.
		for k := range s.Environment {
			require.True(t, settings[k], "%s sets %s, which docs/configuration.md does not list", name, k)
		}
		require.NotNil(t, s.Environment["SENDONCE_DATABASE_URL"], name)
		require.NotEmpty(t, *s.Environment["SENDONCE_UNSUBSCRIBE_SECRET"], name)
		// Docker's SIGKILL must come after the service's own shutdown deadline.
		shutdown, err := time.ParseDuration(*s.Environment["SENDONCE_SHUTDOWN_TIMEOUT"])
		require.NoError(t, err)
		require.NotNil(t, s.StopGracePeriod, name)
		require.Greater(t, time.Duration(*s.StopGracePeriod), shutdown, name)
	}
	// The API is probed by the binary itself (no curl in the image); an executor-only
	// process has no API listener, so it is probed on its metrics listener, which
	// answers /healthz: the probe's address and SENDONCE_METRICS_ADDR must agree.
	require.Equal(t, types.HealthCheckTest{"CMD", "/sendonce", "healthcheck"}, p.Services["api"].HealthCheck.Test)
	require.False(t, p.Services["executor"].HealthCheck.Disable)
	require.Equal(t, types.HealthCheckTest{"CMD", "/sendonce", "healthcheck", "127.0.0.1:9090"}, p.Services["executor"].HealthCheck.Test)
	require.Equal(t, ":9090", *p.Services["executor"].Environment["SENDONCE_METRICS_ADDR"])
	require.Nil(t, p.Services["api"].Environment["SENDONCE_METRICS_ADDR"], "the API serves /metrics on its own address")
	// The Dockerfile's note on the executor's health check describes this file's.
	require.Contains(t, readFile(t, "Dockerfile"), "`"+strings.Join(p.Services["executor"].HealthCheck.Test[1:], " ")+"`")
	require.Contains(t, readFile(t, "Dockerfile"), "SENDONCE_METRICS_ADDR="+*p.Services["executor"].Environment["SENDONCE_METRICS_ADDR"])
	require.True(t, p.Services["migrate"].HealthCheck.Disable)

	// A trial can add senders with credentials: the API that stores them and the
	// executor that reads them share one well-formed key ring (keyid:base64 of 32 bytes).
	for _, name := range []string{"api", "executor"} {
		ring := p.Services[name].Environment["SENDONCE_SECRETS_KEY"]
		require.NotNil(t, ring, name)
		requireKeyRing(t, *ring)
		require.Equal(t, *ring, *p.Services["api"].Environment["SENDONCE_SECRETS_KEY"], name)
	}
	require.NotEmpty(t, p.Services["postgres"].HealthCheck.Test)
	require.NotEmpty(t, p.Services["mailpit"].HealthCheck.Test)

	// The executor sends to Mailpit's SMTP port without TLS, as the README says.
	ex := p.Services["executor"].Environment
	require.Equal(t, "smtp", *ex["SENDONCE_PROVIDER"])
	require.Equal(t, "mailpit", *ex["SENDONCE_SMTP_HOST"])
	require.Equal(t, "1025", *ex["SENDONCE_SMTP_PORT"])
	require.Equal(t, "none", *ex["SENDONCE_SMTP_SECURITY"])

	published := map[string]string{}
	for name, s := range p.Services {
		for _, port := range s.Ports {
			published[port.Published] = name
		}
	}
	require.Equal(t, map[string]string{"8080": "api", "8025": "mailpit"}, published)
	// The README names the images and ports the file uses.
	for _, s := range []string{"postgres:17", "axllent/mailpit", "localhost:8025", "localhost:8080",
		"docker compose run --rm api account create"} {
		require.True(t, strings.Contains(readme, s), "docs/deploy.md does not mention %q", s)
	}
}

// TestComposeInterpolation: an operator's secrets replace the local-trial defaults
// everywhere they are used.
func TestComposeInterpolation(t *testing.T) {
	t.Parallel()
	ring := "k2:" + base64.StdEncoding.EncodeToString(make([]byte, 32))
	p := loadCompose(t, map[string]string{"POSTGRES_PASSWORD": "s3cret", "SENDONCE_UNSUBSCRIBE_SECRET": "k2:prod-secret",
		"SENDONCE_SECRETS_KEY": ring, "SENDONCE_IMAGE": "registry.example/sendonce:1.2.3"})
	require.Equal(t, "s3cret", *p.Services["postgres"].Environment["POSTGRES_PASSWORD"])
	for _, name := range []string{"migrate", "api", "executor"} {
		s := p.Services[name]
		require.Equal(t, "registry.example/sendonce:1.2.3", s.Image)
		require.True(t, strings.Contains(*s.Environment["SENDONCE_DATABASE_URL"], ":s3cret@postgres:5432/"), name)
		require.Equal(t, "k2:prod-secret", *s.Environment["SENDONCE_UNSUBSCRIBE_SECRET"], name)
		require.Equal(t, ring, *s.Environment["SENDONCE_SECRETS_KEY"], name)
	}
}

// requireKeyRing checks SENDONCE_SECRETS_KEY's form as the service parses it:
// comma-separated keyid:base64key entries, each key 32 bytes in standard base64.
func requireKeyRing(t *testing.T, ring string) {
	t.Helper()
	for _, entry := range strings.Split(ring, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(entry), ":")
		require.True(t, ok && id != "", "%q: keyid:base64key", entry)
		key, err := base64.StdEncoding.DecodeString(b64)
		require.NoError(t, err, entry)
		require.Len(t, key, 32, entry)
	}
}
