package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/sender"
)

// tourFiles hold the API tour, read as one document in this order: the API guide, then the senders
// of the providers page and the events page.
var tourFiles = []string{"../../docs/api.md", "../../docs/providers.md", "../../docs/events.md"}

// tourFile names the tour's documents in messages.
const tourFile = "docs/api.md, docs/providers.md and docs/events.md"

// tourHeadings are the sections whose ```sh blocks make up the tour, run in this order as one script
// (later blocks use the variables and the api function of earlier ones). A section runs up to the next
// heading of any level.
var tourHeadings = []string{
	"### Subscribers, lists, suppressions and a campaign",
	"### Segments",
	"## Transactional messages",
	"## Senders",
	"## Sign-up forms and double opt-in",
	"### One-click unsubscribe (RFC 8058)",
	"### Provider webhooks",
	"### Endpoints",
	"### Deliveries",
	"### Pull and stream",
}

// tourSkip, as the first line of a block, marks one that cannot run against a local service (say it
// needs a token only a received email holds); the comment says why.
const tourSkip = "# tour: skip"

// tourBlocks returns the sh blocks under the headings of tourHeadings, in that order, and how many
// were marked tourSkip.
func tourBlocks(t *testing.T, doc string) (blocks []string, skipped int) {
	t.Helper()
	return shBlocks(t, doc, tourFile, tourHeadings)
}

// shBlocks returns the sh blocks of doc (named file in messages) under headings, in that order, each
// after a marker line, and how many were marked tourSkip.
func shBlocks(t *testing.T, doc, file string, headings []string) (blocks []string, skipped int) {
	t.Helper()
	lines := strings.Split(doc, "\n")
	for _, h := range headings {
		start := -1
		for i, l := range lines {
			if l == h {
				start = i
				break
			}
		}
		require.NotEqual(t, -1, start, "%s lost its heading %q", file, h)
		var block []string
		in := false
		for _, l := range lines[start+1:] {
			if !in && strings.HasPrefix(l, "#") {
				break // the next heading
			}
			switch {
			case !in && l == "```sh":
				in, block = true, nil
			case in && l == "```":
				in = false
				if len(block) > 0 && strings.HasPrefix(block[0], tourSkip) {
					skipped++
					continue
				}
				// A marker before each block, so a failure shows where the tour stopped.
				blocks = append(blocks, fmt.Sprintf("echo %q\n%s\n",
					fmt.Sprintf("== %s, block %d", h, len(blocks)+skipped+1), strings.Join(block, "\n")))
			case in:
				block = append(block, l)
			}
		}
	}
	return blocks, skipped
}

// TestREADMETour runs the API tour's sh blocks (see tourHeadings) with bash and curl against the real
// service, exactly as written, so the documentation stays true: every curl -f in it must succeed.
func TestREADMETour(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "seq", "openssl", "base64", "od"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set but %s is not on PATH: the README tour must run in CI", tool)
			}
			t.Skipf("%s not found", tool)
		}
	}
	var doc strings.Builder
	for _, f := range tourFiles {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		doc.Write(b)
		doc.WriteString("\n")
	}
	blocks, skipped := tourBlocks(t, doc.String())
	require.GreaterOrEqual(t, len(blocks), 9, "the tour's runnable blocks were found")
	script := strings.Join(blocks, "")
	require.Contains(t, script, "BASE=http://127.0.0.1:8080", "the first block sets BASE")

	pool := dbtest.New(t)
	_, key, err := account.NewService(pool).Create(context.Background(), "tour")
	require.NoError(t, err)
	// Configured as `make run` (sendonce dev) is: a key ring for sender credentials, private destinations allowed.
	// Logging at info, as make run does, counted: the tour's 10,000 recipients must not flood the terminal.
	logs := &lineCounter{}
	base := startServiceLogging(t, pool.Config().ConnString(), logs, func(cfg *config.Config) {
		cfg.SecretsKey = []string{sender.NewKeyRingEntry("k1")}
		cfg.EventAllowPrivate, cfg.EventAllowHTTP = true, true
		cfg.LogLevel = "info"
	})
	script = strings.Replace(script, "BASE=http://127.0.0.1:8080", "BASE="+base, 1)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tour.sh"), []byte("set -euo pipefail\n"+script), 0o644))
	cmd := exec.Command("bash", "tour.sh")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SENDONCE_API_KEY="+key)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("ran %d blocks of %s, skipped %d marked %q", len(blocks), tourFile, skipped, tourSkip)
	require.NoError(t, os.WriteFile(filepath.Join(os.TempDir(), "sendonce-tour.out"), out, 0o644))
	require.Contains(t, string(out), `"inserted":10000`)
	require.Contains(t, string(out), `{"changed":2}`, "two subscribers, ids taken from a response, joined the beta list")
	require.Contains(t, string(out), "Idempotent-Replayed: true")
	require.Contains(t, string(out), `"current_status":"`)
	require.Contains(t, string(out), `"counts":{`)
	require.Contains(t, string(out), `"subject":"Your receipt A-1002"`, "the template preview")
	require.Contains(t, string(out), `"idempotency_key":"order-A-1002-receipt"`)
	require.Equal(t, 2, strings.Count(string(out), "Idempotent-Replayed: true"), "the approve and the message replays")
	require.Contains(t, string(out), `"pointer":"/Idempotency-Key"`, "another body under the same key")
	require.Contains(t, string(out), `{"count":10000,`, "the segment preview on the tour's data")
	require.Contains(t, string(out), `"pointer":"/match"`, "the broken segment")
	require.Contains(t, string(out), `"confirmation_required":true`, "the JSON sign-up")
	require.Contains(t, string(out), `"applied":1`, "the signed opt-out")
	n, sample := logs.count()
	require.Less(t, n, 100, "log lines during the tour (per-recipient lines belong at debug); the first ones:\n%s", sample)
	require.Regexp(t, `"ok":false,"step":"(auth|connect)"\}`, string(out), "verify with a placeholder token: refused, or offline")
}

// lineCounter counts the log lines written to it and keeps the first few.
type lineCounter struct {
	mu     sync.Mutex
	lines  int
	sample strings.Builder
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines += bytes.Count(p, []byte("\n"))
	if c.lines <= 20 {
		c.sample.Write(p)
	}
	return len(p), nil
}

func (c *lineCounter) count() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines, c.sample.String()
}

// TestSequencesQuickstart runs the quickstart of docs/sequences.md ("A welcome series in five
// minutes") with bash, curl and jq against the real service, exactly as written but for the
// address: a list, two templates, a sequence activated, a subscriber joining the list, and her
// timeline once the sweep enrolled her and queued the welcome.
func TestSequencesQuickstart(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq", "seq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set but %s is not on PATH: the sequences quickstart must run in CI", tool)
			}
			t.Skipf("%s not found", tool)
		}
	}
	const file = "docs/sequences.md"
	doc, err := os.ReadFile("../../" + file)
	require.NoError(t, err)
	blocks, skipped := shBlocks(t, string(doc), file, []string{"## A welcome series in five minutes"})
	require.NotEmpty(t, blocks)
	require.Zero(t, skipped)
	script := strings.Join(blocks, "")
	const addr = "API=http://127.0.0.1:8080/v1"
	require.Contains(t, script, addr, "the quickstart sets API")

	pool := dbtest.New(t)
	_, key, err := account.NewService(pool).Create(context.Background(), "quickstart")
	require.NoError(t, err)
	base := startService(t, pool.Config().ConnString())
	script = strings.Replace(script, addr, "API="+base+"/v1", 1)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "quickstart.sh"), []byte("set -euo pipefail\n"+script), 0o644))
	cmd := exec.Command("bash", "quickstart.sh")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KEY="+key)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), `"active"`, "the sequence was activated")
	require.Regexp(t, `"outcome": "entered"`, string(out), "Ada's timeline: %s", out)
	require.Regexp(t, `"outcome": "sent"`, string(out), "the welcome was queued: %s", out)
	require.Regexp(t, `"waiting:until": 1`, string(out), "the stats: %s", out)
}
