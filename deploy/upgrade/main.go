// Command upgrade is the harness behind `make upgrade`: a rolling upgrade from the
// previous release, built from git history, to this one, in the middle of a send.
//
//  1. The previous release (-from, a commit of main) is built from `git archive`.
//  2. On a throwaway PostgreSQL it migrates its schema and sends a campaign to the
//     idempotent HTTP sink; at -kill-at of the recipients it is killed (SIGKILL).
//  3. This release's `sendonce migrate` runs, then this release (API and executor)
//     and the previous one again (executor only) send side by side on the new
//     schema until the campaign is sent.
//
// It prints one line for scripts:
//
//	upgrade: from=… recipients=… duplicates=… lost=… replays=… old_on_new=… takeover_s=…
//
// and exits non-zero when a recipient was lost or delivered twice, the delivery
// invariant does not hold, the previous release sent nothing on the new schema or
// one of its statements failed on it (SQLSTATE class 42: an undefined or changed
// column, table or function).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sink"
)

// previousRelease is the release this one upgrades from when the clone has no
// release tag (a clone without tags): v0.1.0's commit. With tags, the newest
// v* tag reachable from HEAD is the previous release (lastRelease).
const previousRelease = "9a7e1e8"

// lastRelease is the newest release tag (v*) reachable from HEAD, or
// previousRelease when git knows none.
func lastRelease() string {
	out, err := exec.Command("git", "describe", "--tags", "--abbrev=0", "--match", "v*", "HEAD").Output()
	if tag := strings.TrimSpace(string(out)); err == nil && tag != "" {
		return tag
	}
	return previousRelease
}

type options struct {
	from       string
	oldBin     string
	sendonce   string
	recipients int
	killAt     float64
	timeout    time.Duration
	keep       bool
}

func main() {
	var o options
	flag.StringVar(&o.from, "from", "", "the previous release (a tag or commit), built from git history (default: the newest v* tag, else v0.1.0's commit)")
	flag.StringVar(&o.oldBin, "old", "", "a binary of the previous release already built (skips the build)")
	flag.StringVar(&o.sendonce, "sendonce", "bin/sendonce", "this release's binary")
	flag.IntVar(&o.recipients, "recipients", 20000, "campaign size")
	flag.Float64Var(&o.killAt, "kill-at", 0.3, "fraction of recipients delivered before the previous release is killed")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long")
	flag.BoolVar(&o.keep, "keep", false, "keep the run folder (logs, data) afterwards")
	flag.Parse()
	if o.from == "" {
		o.from = lastRelease()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "upgrade:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s upgrade: "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

func run(ctx context.Context, o options) (err error) {
	var cerr error
	if o.sendonce, cerr = filepath.Abs(o.sendonce); cerr != nil {
		return cerr
	}
	data, err := pgcluster.TempDataDir("sendonce-upgrade-")
	if err != nil {
		return err
	}
	dir := filepath.Dir(data) // the run folder: the cluster's data, logs, the previous release's build
	defer func() {
		if o.keep || err != nil {
			logf("run folder kept: %s", dir)
		} else {
			os.RemoveAll(dir)
		}
	}()
	if o.oldBin == "" {
		var skip string
		o.oldBin, skip, err = buildPrevious(ctx, o.from, dir)
		if err != nil {
			return err
		}
		if skip != "" {
			fmt.Printf("upgrade: skipped: %s\n", skip)
			return nil
		}
	}

	cluster, err := pgcluster.Start(ctx, pgcluster.Options{DataDir: data, Fast: true})
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()
	if err := cluster.CreateDatabase(ctx, "upgrade"); err != nil {
		return err
	}
	url := cluster.URL("upgrade")
	base := []string{"SENDONCE_DATABASE_URL=" + url, "SENDONCE_UNSUBSCRIBE_SECRET=k1:upgrade-secret-0123456789abcdef",
		"SENDONCE_LOG_FORMAT=text", "SENDONCE_TICK=1s", "SENDONCE_PROVIDER=http",
		// Paced so the campaign lasts about 40 s: the kill lands mid-send.
		fmt.Sprintf("SENDONCE_RATE_PER_SECOND=%d", max(o.recipients/40, 10))}

	snk := &sinkByRelease{HTTP: sink.NewHTTP(sink.HTTPOptions{KeepDeliveries: true, Latency: 2 * time.Millisecond})}
	sinkURL, closeSink, err := listen(snk)
	if err != nil {
		return err
	}
	defer closeSink()
	provider := func(release string) string { return "SENDONCE_HTTP_PROVIDER_URL=" + sinkURL + "/" + release }
	base = append(base, provider("old")) // overridden per process below (the last value wins)

	// The previous release creates its schema, the account and the campaign.
	if out, err := output(ctx, dir, "old-migrate", base, o.oldBin, "migrate"); err != nil {
		return fmt.Errorf("previous release's migrate: %w\n%s", err, out)
	}
	out, err := output(ctx, dir, "old-account", base, o.oldBin, "account", "create", "upgrade")
	if err != nil {
		return fmt.Errorf("previous release's account create: %w\n%s", err, out)
	}
	key := ""
	for _, line := range strings.Split(out, "\n") {
		if k, ok := strings.CutPrefix(strings.TrimSpace(line), "SENDONCE_API_KEY="); ok {
			key = k
		}
	}
	if key == "" {
		return fmt.Errorf("no API key in the output of account create:\n%s", out)
	}
	pool, err := postgres.Open(ctx, url, 4)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `INSERT INTO subscribers (account_id, email, email_lower, name, status)
		SELECT a.id, 'r' || i || '@example.com', 'r' || i || '@example.com', 'R' || i, 'confirmed'
		FROM accounts a, generate_series(1, $1::int) i`, o.recipients); err != nil {
		return err
	}

	var procs []*proc
	defer func() {
		for _, p := range procs {
			p.stop(syscall.SIGTERM, 40*time.Second)
		}
	}()
	apiPort := freePort()
	old, err := start(dir, "old", append(base, provider("old"), fmt.Sprintf("SENDONCE_ADDR=127.0.0.1:%d", apiPort)),
		o.oldBin, "serve")
	if err != nil {
		return err
	}
	procs = append(procs, old)
	api := fmt.Sprintf("http://127.0.0.1:%d", apiPort)
	if err := waitHTTP(ctx, api+"/readyz", time.Minute); err != nil {
		return fmt.Errorf("previous release: %w (see %s)", err, old.log)
	}
	id, err := campaign(api, key)
	if err != nil {
		return err
	}
	logf("campaign %d approved on the previous release (%s): %d recipients", id, short(o.from), o.recipients)
	for snk.Stats().Unique < int64(float64(o.recipients)*o.killAt) {
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %.0f%% delivered: %w", 100*o.killAt, err)
		}
	}
	old.stop(syscall.SIGKILL, 10*time.Second)
	killed, killedAt := time.Now(), snk.Stats().Unique
	logf("previous release killed at %d delivered", killedAt)

	// This release migrates, and both releases send on the new schema.
	if out, err := output(ctx, dir, "new-migrate", base, o.sendonce, "migrate"); err != nil {
		return fmt.Errorf("this release's migrate: %w\n%s", err, out)
	}
	apiPort = freePort()
	cur, err := start(dir, "new", append(base, provider("new"), fmt.Sprintf("SENDONCE_ADDR=127.0.0.1:%d", apiPort)),
		o.sendonce, "serve")
	if err != nil {
		return err
	}
	procs = append(procs, cur)
	oldAgain, err := start(dir, "old-on-new", append(base, provider("old")), o.oldBin, "serve", "--api=false")
	if err != nil {
		return err
	}
	procs = append(procs, oldAgain)
	oldBefore := snk.requests("old")
	var status string
	for status != "sent" {
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			bad, _ := schemaErrors(oldAgain.log)
			return fmt.Errorf("campaign not sent (status %q, %d delivered; %d schema errors of the previous release, "+
				"logs in %s): %w", status, snk.Stats().Unique, len(bad), dir, err)
		}
		_ = pool.QueryRow(ctx, `SELECT status FROM campaigns WHERE id = $1`, id).Scan(&status)
	}
	takeover := time.Since(killed)
	oldOnNew := snk.requests("old") - oldBefore
	for _, p := range procs {
		p.stop(syscall.SIGTERM, 40*time.Second)
	}
	procs = nil

	st := snk.Stats()
	lost := int64(o.recipients) - st.Unique
	delivered := map[string]int{}
	for k := range snk.Deliveries() {
		delivered[k] = 1
	}
	invErr := invariant.Check(ctx, pool, invariant.Options{Delivered: delivered,
		Recipients: map[int64]int64{id: int64(o.recipients)}})
	schemaErrs, err := schemaErrors(oldAgain.log)
	if err != nil {
		return err
	}
	fmt.Printf("upgrade: from=%s recipients=%d duplicates=%d lost=%d replays=%d killed_at=%d old_on_new=%d "+
		"old_schema_errors=%d takeover_s=%.1f\n", short(o.from), o.recipients, st.Duplicates, lost, st.Replays,
		killedAt, oldOnNew, len(schemaErrs), takeover.Seconds())
	switch {
	case invErr != nil:
		return fmt.Errorf("delivery invariant: %w", invErr)
	case lost != 0 || st.Duplicates != 0:
		return fmt.Errorf("%d duplicates, %d lost", st.Duplicates, lost)
	case len(schemaErrs) > 0:
		return fmt.Errorf("the previous release's statements fail on the new schema:\n%s", strings.Join(schemaErrs, "\n"))
	case oldOnNew == 0:
		return errors.New("the previous release sent nothing on the new schema")
	}
	return nil
}

// buildPrevious builds the binary of commit from git history into dir. When the
// commit is not in this clone (a shallow clone, a source archive), it returns why
// in skip, unless CI is set: there the check must run, so that is an error.
func buildPrevious(ctx context.Context, from, dir string) (bin, skip string, err error) {
	root, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output()
	if err == nil {
		err = exec.CommandContext(ctx, "git", "cat-file", "-e", from+"^{commit}").Run()
	}
	if err != nil {
		why := fmt.Sprintf("the previous release %s is not in this clone's git history (%v); "+
			"a shallow clone needs `git fetch --unshallow`", short(from), err)
		if os.Getenv("CI") != "" {
			return "", "", errors.New(why)
		}
		return "", why, nil
	}
	src := filepath.Join(dir, "previous")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", "", err
	}
	began := time.Now()
	archive := exec.CommandContext(ctx, "git", "-C", strings.TrimSpace(string(root)), "archive", "--format=tar", from)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", src)
	if untar.Stdin, err = archive.StdoutPipe(); err != nil {
		return "", "", err
	}
	var stderr bytes.Buffer
	archive.Stderr, untar.Stderr = &stderr, &stderr
	if err := untar.Start(); err != nil {
		return "", "", err
	}
	if err := archive.Run(); err != nil {
		return "", "", fmt.Errorf("git archive %s: %w %s", short(from), err, stderr.String())
	}
	if err := untar.Wait(); err != nil {
		return "", "", fmt.Errorf("untar %s: %w %s", short(from), err, stderr.String())
	}
	bin = filepath.Join(dir, "sendonce-"+short(from))
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/sendonce")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("build the previous release %s: %w\n%s", short(from), err, out)
	}
	logf("previous release %s built from git history in %.1fs", short(from), time.Since(began).Seconds())
	return bin, "", nil
}

// schemaErrors are the log lines of a run that report an SQLSTATE of class 42
// (syntax error or access rule violation: an undefined column, table or function).
func schemaErrors(logPath string) ([]string, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.Contains(line, "SQLSTATE 42") {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

// sinkByRelease is the idempotent sink, counting the requests each release made
// (its provider URL ends in /old or /new).
type sinkByRelease struct {
	*sink.HTTP
	old, cur atomic.Int64
}

func (s *sinkByRelease) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		if r.URL.Path == "/old" {
			s.old.Add(1)
		} else {
			s.cur.Add(1)
		}
	}
	s.HTTP.ServeHTTP(w, r)
}

func (s *sinkByRelease) requests(release string) int64 {
	if release == "old" {
		return s.old.Load()
	}
	return s.cur.Load()
}

func short(commit string) string { return commit[:min(len(commit), 7)] }

// proc is a child process writing to a log file in the run folder.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

func start(dir, name string, env []string, bin string, args ...string) (*proc, error) {
	path := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), log: path}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// stop sends sig and waits up to d, then kills.
func (p *proc) stop(sig syscall.Signal, d time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(d):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// output runs one command to its end and returns what it printed.
func output(ctx context.Context, dir, name string, env []string, bin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(dir, name+".log"), out, 0o644)
	return string(out), err
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func listen(h http.Handler) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}

func waitHTTP(ctx context.Context, url string, d time.Duration) error {
	client := http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(d)
	for {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not 200 within %s", url, d)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// campaign creates and approves, over the API, a campaign to every confirmed subscriber.
func campaign(api, key string) (int64, error) {
	call := func(path string, body any) (map[string]any, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, api+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			return nil, fmt.Errorf("%s: %s %s", path, resp.Status, raw)
		}
		var out map[string]any
		return out, json.Unmarshal(raw, &out)
	}
	c, err := call("/v1/campaigns", map[string]any{"name": "upgrade", "subject": "Hi {{.Name}}",
		"from_email": "news@example.com", "text_template": "Hello {{.Name}}, bye: {{.UnsubscribeURL}}"})
	if err != nil {
		return 0, err
	}
	id := int64(c["id"].(float64))
	_, err = call(fmt.Sprintf("/v1/campaigns/%d/approve", id), map[string]any{})
	return id, err
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
