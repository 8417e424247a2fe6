package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
	"github.com/sendonce/sendonce/internal/servicetest"
)

// cliRun is one run of the built binary: its output and exit code.
type cliRun struct {
	stdout, stderr string
	code           int
}

// sendonce runs the binary with env (and nothing of this process's SENDONCE_*),
// stdin as its standard input; stdout and stderr are pipes, not terminals.
func sendonce(t *testing.T, env []string, stdin string, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, servicetest.Binary(), args...)
	cmd.Env = append(servicetest.CleanEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return cliRun{out.String(), errb.String(), code}
}

// setup starts a real service, logs the CLI in to it (the login file is what the
// later runs use) and returns a runner plus an SDK client for arranging data.
func setup(t *testing.T) (run func(args ...string) cliRun, sdk *client.Client, svc servicetest.Service) {
	t.Helper()
	svc = servicetest.Start(t)
	conf := filepath.Join(t.TempDir(), "cli", "config.json")
	env := []string{"SENDONCE_CONFIG=" + conf}
	login := sendonce(t, env, svc.APIKey+"\n", "login", "--url", svc.URL)
	require.Equal(t, 0, login.code, login.stderr)
	require.Contains(t, login.stdout, "logged in to "+svc.URL)
	st, err := os.Stat(conf)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the key is readable by its owner only")
	sdk, err = client.New(client.Config{URL: svc.URL, APIKey: svc.APIKey})
	require.NoError(t, err)
	return func(args ...string) cliRun { return sendonce(t, env, "", args...) }, sdk, svc
}

func writeCSV(t *testing.T, n int, bad string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("email,name,status\n")
	for i := range n {
		fmt.Fprintf(&b, "reader%03d@example.com,Reader %d,confirmed\n", i, i)
	}
	if bad != "" {
		b.WriteString(bad + ",Bad,confirmed\n")
	}
	p := filepath.Join(t.TempDir(), "people.csv")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o600))
	return p
}

func createCampaign(t *testing.T, sdk *client.Client, name string) int64 {
	t.Helper()
	resp, err := sdk.CreateCampaignWithResponse(context.Background(), nil, client.CampaignCreate{
		Name: name, FromEmail: "news@example.com", Subject: client.Ptr("Hello {{.Name}}"),
		HtmlTemplate: client.Ptr("<p>Hi {{.Name}}</p>"), TextTemplate: client.Ptr("Hi {{.Name}}"),
	})
	require.NoError(t, client.Check(resp, err))
	return resp.JSON201.Id
}

// The everyday jobs through the binary against a real service, in a pipe: import
// with its summary, look a subscriber up, approve a campaign and watch it to the
// end, list and show, with --json parsed and the documented exit codes.
func TestCLIAgainstAService(t *testing.T) {
	t.Parallel()
	run, sdk, svc := setup(t)

	csv := writeCSV(t, 250, "not-an-address")
	r := run("subscribers", "import", csv)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "uploading "+csv)
	require.NotContains(t, r.stderr, "\r", "no progress bar drawn into a pipe")
	require.Contains(t, r.stdout, "imported "+csv+": 250 inserted, 0 updated, 1 rejected")
	require.Contains(t, r.stdout, "not-an-address")

	r = run("subscribers", "import", csv, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var res client.ImportResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	require.Equal(t, int64(250), res.Updated)
	require.Len(t, res.Rejected, 1)

	r = run("subscribers", "get", "READER007@example.com", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var sub client.Subscriber
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sub))
	require.Equal(t, "reader007@example.com", sub.Email)
	require.Equal(t, client.SubscriberStatus("confirmed"), sub.Status)
	require.Equal(t, ExitNotFound, run("subscribers", "get", "reader00@example.com").code, "a prefix is not a match")

	// The export, streamed to standard output: a header and every subscriber.
	r = run("subscribers", "export", "--format", "csv")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\r\n"), "\r\n")
	require.Len(t, lines, 251, "a header and 250 subscribers")
	require.True(t, strings.HasPrefix(lines[0], "id,email,name,status,attributes"), lines[0])
	require.Contains(t, r.stdout, ",reader007@example.com,Reader 7,confirmed,")
	r = run("subscribers", "export", "--format", "ndjson", "--status", "confirmed")
	require.Equal(t, 0, r.code, r.stderr)
	require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 250)

	// Watched in a pipe: lines, then the final counts on stdout.
	first := createCampaign(t, sdk, "first")
	r = run("campaigns", "approve", itoa(first), "--watch")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, fmt.Sprintf("campaign %d sent: 250 total: 250 sent, 0 queued, 0 sending, 0 failed", first))
	require.Contains(t, r.stderr, fmt.Sprintf("campaign %d approved; watching", first))
	require.Contains(t, r.stderr, "(250/250)")

	// With --json only the final stats, as JSON.
	second := createCampaign(t, sdk, "second")
	r = run("campaigns", "approve", itoa(second), "--watch", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var stats client.CampaignStats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &stats))
	require.Equal(t, client.CampaignStatusSent, stats.Status)
	require.Equal(t, int64(250), stats.Counts.Sent)

	r = run("campaigns", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var camps []client.Campaign
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &camps))
	require.Len(t, camps, 2)
	r = run("campaigns", "list")
	require.Contains(t, r.stdout, "first")
	require.Contains(t, r.stdout, "second")
	r = run("campaigns", "show", itoa(first))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "250 sent")
	// The report: sent counted per recipient domain, the rates' basis named.
	r = run("campaigns", "report", itoa(first))
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `example\.com +250 +0 +0 +0 +0 +0`, r.stdout)
	require.Contains(t, r.stdout, "rates (of sent)")
	r = run("campaigns", "report", itoa(first), "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rep client.CampaignReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.Equal(t, int64(250), rep.Sent)
	require.Equal(t, ExitNotFound, run("campaigns", "report", "999999").code)

	// A sent campaign cannot be approved or paused again: refused, exit 4; an unknown one is 3.
	require.Equal(t, ExitRefused, run("campaigns", "approve", itoa(first)).code)
	require.Equal(t, ExitRefused, run("campaigns", "pause", itoa(first)).code)
	require.Equal(t, ExitNotFound, run("campaigns", "show", "999999").code)
	require.Equal(t, ExitUsage, run("campaigns", "show", "x").code)
	cancelled := createCampaign(t, sdk, "cancelled")
	r = run("campaigns", "cancel", itoa(cancelled), "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"status": "cancelled"`)

	// A wrong key: exit 5, whatever the login file says.
	require.Equal(t, ExitAuth, sendonce(t, []string{"SENDONCE_URL=" + svc.URL, "SENDONCE_API_KEY=so_wrong"}, "", "campaigns", "list").code)
}

// Suppressions, a transactional message sent once per key, and events tail.
func TestCLIMessagesSuppressionsEvents(t *testing.T) {
	t.Parallel()
	run, sdk, svc := setup(t)
	ctx := context.Background()

	r := run("suppressions", "add", "gone@example.com", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var sup client.Suppression
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sup))
	require.Equal(t, "gone@example.com", sup.Email)
	require.Equal(t, 0, run("suppressions", "remove", "gone@example.com").code)
	require.Equal(t, ExitNotFound, run("suppressions", "remove", "gone@example.com").code)

	tpl, err := sdk.CreateTemplateWithResponse(ctx, nil, client.TemplateCreate{Name: "receipt", Subject: "Receipt {{.Attributes.order}}",
		Text: client.Ptr("Thanks for {{.Attributes.order}}")})
	require.NoError(t, client.Check(tpl, err))
	send := []string{"messages", "send", "--to", "ada@example.com", "--from", "shop@example.com",
		"--template", itoa(tpl.JSON201.Id), "--idempotency-key", "order-1", "--data", `{"order":"A-1"}`, "--json"}
	r = run(send...)
	require.Equal(t, 0, r.code, r.stderr)
	var m1, m2 client.Message
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m1))
	r = run(send...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m2))
	require.Equal(t, m1.Id, m2.Id, "the same key is the same message")
	require.Equal(t, ExitUsage, run("messages", "send", "--to", "ada@example.com").code)
	mdPath := filepath.Join(t.TempDir(), "receipt.md")
	require.NoError(t, os.WriteFile(mdPath, []byte("# Thanks for {{.Attributes.order}}"), 0o600))
	r = run("messages", "send", "--to", "ada@example.com", "--from", "shop@example.com", "--subject", "Receipt",
		"--markdown", mdPath, "--idempotency-key", "order-md", "--data", `{"order":"A-2"}`, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m1))
	// Accepted: the body was the Markdown (a message without one is refused).
	require.Equal(t, "Receipt", m1.Subject)
	require.Equal(t, ExitUsage, run("messages", "send", "--to", "ada@example.com", "--from", "shop@example.com",
		"--template", itoa(tpl.JSON201.Id), "--markdown", mdPath, "--idempotency-key", "both").code)

	// events tail from a cursor: the suppression made after it is the first line.
	sdkAdd := func(email string) {
		resp, err := sdk.AddSuppressionWithResponse(ctx, nil, client.SuppressionCreate{Email: email})
		require.NoError(t, client.Check(resp, err))
	}
	sdkAdd("before@example.com")
	// The cursor after that event, once the log lists it (an event is listed when
	// every older transaction has ended; before that the log can be empty, and an
	// empty --after means "from now").
	var after string
	for deadline := time.Now().Add(time.Minute); after == ""; {
		for ev, err := range sdk.Events.Iter(ctx, client.ListEventsParams{Type: &client.EventTypeFilter{"suppression.created"}}) {
			require.NoError(t, err)
			if ev.Data["email"] == "before@example.com" {
				after, err = logEnd(ctx, sdk)
				require.NoError(t, err)
			}
		}
		if after == "" {
			require.True(t, time.Now().Before(deadline), "the suppression's event was never listed")
			time.Sleep(20 * time.Millisecond) // polling the log for the event, not waiting out a delay
		}
	}
	sdkAdd("tailed@example.com")
	tailCtx, stopTail := context.WithTimeout(ctx, 2*time.Minute) // a missed event fails the test instead of hanging it
	defer stopTail()
	cmd := exec.CommandContext(tailCtx, servicetest.Binary(), "events", "tail", "--json", "--type", "suppression.created", "--after", after)
	cmd.Env = append(servicetest.CleanEnv(), "SENDONCE_URL="+svc.URL, "SENDONCE_API_KEY="+svc.APIKey)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadBytes('\n')
	require.NoError(t, err)
	var ev struct {
		Cursor string         `json:"cursor"`
		Type   string         `json:"type"`
		Data   map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(line, &ev))
	require.Equal(t, "suppression.created", ev.Type)
	require.Equal(t, "tailed@example.com", ev.Data["email"])
	require.NotEmpty(t, ev.Cursor)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, cmd.Wait(), "interrupted, tail exits 0")
}

// On a terminal the import draws its upload as a bar (bytes of the file, ending at
// 100%) and watch draws one bar; the test stands in for the terminal.
func TestCLIProgressOnATerminal(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t)
	sdk, err := client.New(client.Config{URL: svc.URL, APIKey: svc.APIKey})
	require.NoError(t, err)
	csv := writeCSV(t, 120, "")
	first := createCampaign(t, sdk, "tty")

	execute := func(args ...string) (string, string, error) {
		root := &cobra.Command{Use: "sendonce", SilenceErrors: true, SilenceUsage: true}
		(&App{Terminal: func(io.Writer) bool { return true }}).register(root)
		var out, errb bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errb)
		root.SetArgs(append([]string{"--url", svc.URL, "--api-key", svc.APIKey}, args...))
		err := root.ExecuteContext(context.Background())
		return out.String(), errb.String(), err
	}
	out, bar, err := execute("subscribers", "import", csv)
	require.NoError(t, err)
	require.Contains(t, out, "120 inserted")
	require.Contains(t, bar, "uploading "+csv)
	require.Contains(t, bar, "100%")
	require.Contains(t, bar, "\r", "redrawn in place")

	out, bar, err = execute("campaigns", "approve", itoa(first), "--watch")
	require.NoError(t, err)
	require.Contains(t, out, "120 sent")
	require.Contains(t, bar, "100%")
	require.Contains(t, bar, "(120/120")
	require.Contains(t, bar, fmt.Sprintf("campaign %d sent · sent 120 · queued 0 · failed 0", first))
}

// The watch bar's text: settled sends of the total, the counts, and a growing bar.
func TestWatchBarRenders(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	v := newBarView(&buf, 7, 0)
	s := &client.CampaignStats{Status: client.CampaignStatusSending, Total: 10,
		Counts: client.SendCounts{Sent: 3, Queued: 6, Failed: 1}}
	v.update(s)
	require.Contains(t, v.bar.String(), "campaign 7 sending · sent 3 · queued 6 · failed 1")
	require.Contains(t, v.bar.String(), "40%")
	require.Contains(t, v.bar.String(), "(4/10")

	// Events seen beyond the last stats read move the display; a stats read behind
	// the events does not move it back.
	var seen client.SendCounts
	require.True(t, count(&seen, "send.sent"))
	require.False(t, count(&seen, "campaign.paused"))
	for range 4 {
		count(&seen, "send.sent")
	}
	m := merge(s, seen)
	require.Equal(t, client.SendCounts{Sent: 5, Failed: 1, Queued: 4}, m.Counts)
	v.update(m)
	require.Contains(t, v.bar.String(), "sent 5 · queued 4 · failed 1")
	require.Contains(t, v.bar.String(), "(6/10")

	s.Status, s.Counts = client.CampaignStatusSent, client.SendCounts{Sent: 9, Failed: 1}
	v.done(s)
	require.Contains(t, v.bar.String(), "100%")
	require.True(t, strings.HasSuffix(buf.String(), "\n"))
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	for err, code := range map[error]int{
		nil:                        0,
		&client.Error{Status: 404}: ExitNotFound, &client.Error{Status: 422}: ExitRefused,
		&client.Error{Status: 409}: ExitRefused, &client.Error{Status: 401}: ExitAuth,
		&client.Error{Status: 503}: ExitError, &client.Error{Status: 429}: ExitError,
		Usage(io.EOF): ExitUsage, fmt.Errorf("watch: %w", errIncomplete): ExitIncomplete, io.EOF: ExitError,
	} {
		require.Equal(t, code, ExitCode(err), "%v", err)
	}
}

// In a real pseudo-terminal the binary itself decides to draw: the upload bar is
// redrawn in place and ends at 100%, then the summary. (The pipe runs above print
// no bar.)
func TestCLIImportOnAPseudoTerminal(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t)
	csv := writeCSV(t, 2000, "")
	cmd := exec.Command(servicetest.Binary(), "subscribers", "import", csv)
	cmd.Env = append(servicetest.CleanEnv(), "SENDONCE_URL="+svc.URL, "SENDONCE_API_KEY="+svc.APIKey)
	tty, err := pty.Start(cmd)
	require.NoError(t, err)
	defer tty.Close()
	var screen bytes.Buffer
	_, _ = io.Copy(&screen, tty) // until the command exits (EIO on Linux once the other side closes)
	require.NoError(t, cmd.Wait())
	out := screen.String()
	require.Contains(t, out, "uploading "+csv)
	require.Contains(t, out, "100%")
	require.Contains(t, out, "\r", "the bar is redrawn in place")
	require.Contains(t, out, "2000 inserted, 0 updated, 0 rejected")
}
