package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
	"github.com/sendonce/sendonce/internal/servicetest"
)

// What a person reads when the API refuses: one "sendonce:" prefix, the status,
// and a 422's detail once (the field error repeating it is not printed again).
func TestCLIErrorText(t *testing.T) {
	t.Parallel()
	run, sdk, _ := setup(t)

	id := createCampaign(t, sdk, "gone")
	require.Equal(t, 0, run("campaigns", "cancel", itoa(id)).code)
	r := run("campaigns", "approve", itoa(id))
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.NotContains(t, r.stderr, "sendonce: sendonce:")
	require.True(t, strings.HasPrefix(r.stderr, "sendonce: 409 "), r.stderr)

	r = run("suppressions", "add", "not-an-address")
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "sendonce: 422 "), r.stderr)
	detail := strings.TrimSpace(strings.TrimPrefix(r.stderr, "sendonce: 422 "))
	require.NotEmpty(t, detail)
	words := strings.Fields(detail)
	last := words[len(words)-1]
	require.Equal(t, 1, strings.Count(r.stderr, last), "the detail is printed once: %s", r.stderr)
}

// A subscriber's attributes print as JSON, not as a Go map.
func TestCLIAttributesPrintAsJSON(t *testing.T) {
	t.Parallel()
	run, sdk, _ := setup(t)
	attrs := client.Attributes{"country": "FR", "plan": "pro"}
	resp, err := sdk.CreateSubscriberWithResponse(context.Background(), nil, client.SubscriberCreate{
		Email: "ada@example.com", Attributes: &attrs})
	require.NoError(t, client.Check(resp, err))
	r := run("subscribers", "get", "ada@example.com")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "map[")
	require.Contains(t, r.stdout, `{"country":"FR","plan":"pro"}`)
}

// --status lists every status of the API's CampaignStatus enum (openapi.yaml).
func TestCLIStatusHelpListsTheEnum(t *testing.T) {
	t.Parallel()
	spec, err := os.ReadFile("../../openapi.yaml")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)\n    CampaignStatus:\n.*?enum: \[([^\]]*)\]`).FindSubmatch(spec)
	require.NotNil(t, m, "openapi.yaml's CampaignStatus enum")
	r := sendonce(t, nil, "", "campaigns", "list", "--help")
	require.Equal(t, 0, r.code, r.stderr)
	for _, s := range strings.Split(string(m[1]), ",") {
		require.Contains(t, r.stdout, strings.TrimSpace(s), "--status help")
	}
}

// A mistyped command is a usage error that suggests the right one.
func TestCLIDidYouMean(t *testing.T) {
	t.Parallel()
	r := sendonce(t, nil, "", "campaings", "list")
	require.Equal(t, ExitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "Did you mean this?")
	require.Contains(t, r.stderr, "campaigns")
	r = sendonce(t, nil, "", "subscribers", "imprt", "x.csv")
	require.Equal(t, ExitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "import")
}

// login with a piped standard input reads the key without prompting for it.
func TestCLILoginFromAPipeDoesNotPrompt(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t)
	conf := filepath.Join(t.TempDir(), "config.json")
	r := sendonce(t, []string{"SENDONCE_CONFIG=" + conf}, svc.APIKey+"\n", "login", "--url", svc.URL)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "API key:")
	r = sendonce(t, []string{"SENDONCE_CONFIG=" + conf}, "", "login", "--url", svc.URL)
	require.Equal(t, ExitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "standard input")
}

// import --list of a list that does not exist fails before the upload.
func TestCLIImportChecksTheListFirst(t *testing.T) {
	t.Parallel()
	run, _, _ := setup(t)
	r := run("subscribers", "import", writeCSV(t, 10, ""), "--list", "9999")
	require.Equal(t, ExitNotFound, r.code, r.stderr)
	require.NotContains(t, r.stderr, "uploading", "nothing uploaded for a list that is not there")
	require.Contains(t, r.stderr, "9999")
}

// The watch bar's time left comes from the rate since the approval: 34 of 100
// settled after 10 s leaves 66 at 3.4/s, about 19 s.
func TestWatchBarTimeLeft(t *testing.T) {
	t.Parallel()
	v := newBarView(&strings.Builder{}, 7, 0)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v.now = func() time.Time { return t0 }
	s := &client.CampaignStats{Status: client.CampaignStatusSending, Total: 100, Counts: client.SendCounts{Queued: 100}}
	v.update(s)
	for _, step := range []struct {
		at     time.Duration
		sent   int64
		expect string
	}{{10 * time.Second, 34, "19s left"}, {20 * time.Second, 68, "9s left"}, {29 * time.Second, 97, "1s left"}} {
		v.now = func() time.Time { return t0.Add(step.at) }
		s.Counts = client.SendCounts{Sent: step.sent, Queued: 100 - step.sent}
		v.update(s)
		require.Contains(t, v.bar.String(), step.expect, "at %s", step.at)
		require.NotContains(t, v.bar.String(), ":0s]", fmt.Sprint(step.at))
	}
}
