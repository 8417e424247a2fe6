package chaos

import (
	"context"
	cryptorand "crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/clock"
	"github.com/sendonce/sendonce/internal/harnessstore"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/store"
)

// The pieces every run shares: the throwaway database, the sink, the service
// processes it starts and kills, and the waits between.

// queries are the product's queries and the harness's own (db/queries/harness,
// package harnessstore, which the product binary does not carry) on one database.
type queries struct {
	*productQueries
	*harnessQueries
}

type (
	productQueries = store.Queries
	harnessQueries = harnessstore.Queries
)

func newQueries(db store.DBTX) *queries {
	return &queries{store.New(db), harnessstore.New(db)}
}

// chaosCampaign creates an account with n confirmed subscribers and one campaign to
// all of them, approved and due now (db/queries/harness/chaos.sql).
func chaosCampaign(ctx context.Context, q *queries, n int) (acct, id int64, err error) {
	if acct, err = q.ChaosAccountCreate(ctx, "chaos"); err != nil {
		return 0, 0, err
	}
	if _, err = q.ChaosSubscribersCreate(ctx, harnessstore.ChaosSubscribersCreateParams{AccountID: acct, N: int32(n)}); err != nil {
		return 0, 0, err
	}
	id, err = q.ChaosCampaignCreate(ctx, acct)
	return acct, id, err
}

// startServe starts an executor-only `sendonce serve` (the process the runs kill);
// bin is the product binary Run was given.
func startServe(bin string, env []string, logTo io.Writer) (*exec.Cmd, error) {
	return startProcess(bin, env, logTo, "serve", "--api=false")
}

// startProcess starts `sendonce args…` with env on top of the harness's
// environment minus its SENDONCE_ variables.
func startProcess(bin string, env []string, logTo io.Writer, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SENDONCE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logTo, logTo
	// If the harness dies, its children die with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd, cmd.Start()
}

func waitSent(ctx context.Context, q *queries, id int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		st, err := q.ChaosCampaignStatus(ctx, id)
		if err == nil && st == "sent" {
			return nil
		}
		if !sleepCtx(ctx, 20*time.Millisecond) {
			return ctx.Err()
		}
	}
	return errors.New("chaos: the campaign was not sent in time")
}

// waitProgress returns once the sink has accepted something new.
func waitProgress(ctx context.Context, delivered func() int64) {
	before := delivered()
	for delivered() <= before && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}

// sleepCtx waits d on the wall clock or until ctx ends (clock.Clock.Sleep).
func sleepCtx(ctx context.Context, d time.Duration) bool { return clock.Clock{}.Sleep(ctx, d) }

// serviceFlags are the flags of the service settings every run shares.
func (o *chaosOptions) serviceFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Provider, "provider", "http", "http (idempotent sink) or smtp (non-idempotent sink)")
	fs.IntVar(&o.BatchSize, "batch-size", 100, "SENDONCE_BATCH_SIZE of the service")
	fs.IntVar(&o.Workers, "workers", 32, "SENDONCE_WORKERS of the service")
	fs.DurationVar(&o.Lease, "lease", 3*time.Second, "SENDONCE_LEASE of the killed processes")
	fs.BoolVar(&o.Verbose, "v", false, "show the service's log (info level)")
}

// serveEnv is the environment of the service processes a campaign or messages run starts.
func (o chaosOptions) serveEnv(dbURL string) []string {
	env := []string{
		"SENDONCE_DATABASE_URL=" + dbURL,
		"SENDONCE_PROVIDER=" + o.Provider,
		"SENDONCE_TICK=1s",
		"SENDONCE_RATE_PER_SECOND=" + strconv.FormatFloat(o.Rate, 'f', 0, 64),
		"SENDONCE_WORKERS=" + strconv.Itoa(o.Workers),
		"SENDONCE_BATCH_SIZE=" + strconv.Itoa(o.BatchSize),
		"SENDONCE_DB_MAX_CONNS=8",
		// serve refuses to start without a key; a throwaway one per run is enough.
		"SENDONCE_UNSUBSCRIBE_SECRET=chaos:" + cryptorand.Text(),
	}
	if o.Verbose {
		env = append(env, "SENDONCE_LOG_LEVEL=info")
	} else {
		env = append(env, "SENDONCE_LOG_LEVEL=warn")
	}
	if !o.DefaultLease {
		env = append(env, "SENDONCE_LEASE="+o.Lease.String(),
			// A provider call must fit in a third of the lease (config.Validate).
			"SENDONCE_HTTP_PROVIDER_TIMEOUT="+(o.Lease/3).String(),
			"SENDONCE_SMTP_TIMEOUT="+(o.Lease/3).String())
	}
	return env
}

// senderRunEnv is the environment of the executor-only processes of the runs whose
// campaigns go through the account's own senders (-senders, -pool): the process
// provider is only a fallback ("log"), and extra adds the run's own settings.
func senderRunEnv(dbURL string, workers int, lease time.Duration, extra ...string) []string {
	return append([]string{
		"SENDONCE_DATABASE_URL=" + dbURL,
		"SENDONCE_PROVIDER=log",
		"SENDONCE_TICK=1s",
		"SENDONCE_WORKERS=" + strconv.Itoa(workers),
		"SENDONCE_BATCH_SIZE=50",
		"SENDONCE_LOG_LEVEL=warn",
		"SENDONCE_DB_MAX_CONNS=8",
		"SENDONCE_LEASE=" + lease.String(),
		"SENDONCE_EVENT_ALLOW_PRIVATE=true",
		"SENDONCE_UNSUBSCRIBE_SECRET=chaos:" + cryptorand.Text(),
	}, extra...)
}

// killLoop is the kill loop of the runs that SIGKILL one executor-only `sendonce
// serve` at a time: it starts the process and, kills times, waits until the sink
// accepted something new (then for beforeKill, when set), waits a random moment
// under spread and SIGKILLs it. The last process it starts runs until done
// returns and is then stopped with SIGTERM (terminate).
type killLoop struct {
	name       string // the run's name in its messages, e.g. "chaos-pool"
	bin        string
	env        []string
	logTo      io.Writer
	stderr     io.Writer // where each kill is reported
	q          *queries
	kills      int
	spread     time.Duration
	delivered  func() int64
	beforeKill func(k int) // optional; k counts the kills made so far
	done       func(ctx context.Context) error
}

// run returns the kills made and the time from the first start to the last
// process's exit.
func (l killLoop) run(ctx context.Context) (int, time.Duration, error) {
	start := time.Now()
	for k := 0; ; k++ {
		started := time.Now()
		child, err := startServe(l.bin, l.env, l.logTo)
		if err != nil {
			return k, time.Since(start), err
		}
		if k == l.kills {
			werr := l.done(ctx)
			terr := terminate(ctx, l.q, started, child)
			switch {
			case werr != nil:
				return k, time.Since(start), fmt.Errorf("%s: not sent in time: %w", l.name, werr)
			case terr != nil:
				return k, time.Since(start), fmt.Errorf("%s: the last serve did not exit cleanly on SIGTERM: %w", l.name, terr)
			}
			return k, time.Since(start), nil
		}
		waitProgress(ctx, l.delivered)
		if l.beforeKill != nil {
			l.beforeKill(k)
		}
		if !sleepCtx(ctx, time.Duration(rand.Int64N(int64(l.spread)))) {
			_ = child.Process.Kill()
			_ = child.Wait()
			return k, time.Since(start), ctx.Err()
		}
		_ = child.Process.Kill() // SIGKILL
		_ = child.Wait()
		fmt.Fprintf(l.stderr, "%s: kill %d at %s, delivered %d\n", l.name, k+1, time.Since(start).Round(time.Millisecond), l.delivered())
	}
}

// chaosDB is the throwaway cluster of one run, with a migrated database "chaos".
type chaosDB struct {
	dir     string
	cluster *pgcluster.Cluster
	url     string
	pool    *pgxpool.Pool
}

func startChaosDB(ctx context.Context) (_ *chaosDB, err error) {
	db := &chaosDB{}
	defer func() {
		if err != nil {
			db.close()
		}
	}()
	if db.dir, err = pgcluster.TempDataDir("sendonce-chaos-"); err != nil {
		return nil, err
	}
	if db.cluster, err = pgcluster.Start(ctx, pgcluster.Options{DataDir: db.dir, Fast: true}); err != nil {
		return nil, err
	}
	if err = db.cluster.CreateDatabase(ctx, "chaos"); err != nil {
		return nil, err
	}
	db.url = db.cluster.URL("chaos")
	if db.pool, err = postgres.Open(ctx, db.url, 4); err != nil {
		return nil, err
	}
	_, err = postgres.Migrate(ctx, db.pool)
	return db, err
}

func (db *chaosDB) close() {
	if db.pool != nil {
		db.pool.Close()
	}
	if db.cluster != nil {
		_ = db.cluster.Stop()
	}
	if db.dir != "" {
		os.RemoveAll(db.dir)
	}
}

// chaosSink is the provider side of a run: the idempotent HTTP sink (http) or the
// SMTP sink, which cannot deduplicate (smtp); env points the service at it.
type chaosSink struct {
	env  []string
	http *sink.HTTP
	smtp *sink.SMTP
}

// newChaosSink starts the sink; latency is added to every answer, so kills find
// messages in flight, and keep makes the SMTP sink keep the messages it accepts.
func newChaosSink(provider string, latency time.Duration, keep bool) (*chaosSink, error) {
	s := &chaosSink{}
	switch provider {
	case "http":
		s.http = sink.NewHTTP(sink.HTTPOptions{Latency: latency})
		url, err := s.http.Listen("127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		s.env = []string{"SENDONCE_HTTP_PROVIDER_URL=" + url + "/send"}
	case "smtp":
		s.smtp = sink.NewSMTP(sink.SMTPOptions{Latency: latency, KeepMessages: keep})
		addr, err := s.smtp.Listen("127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		host, port, _ := strings.Cut(addr, ":")
		s.env = []string{"SENDONCE_SMTP_HOST=" + host, "SENDONCE_SMTP_PORT=" + port, "SENDONCE_SMTP_SECURITY=none"}
	default:
		return nil, fmt.Errorf("chaos: -provider must be http or smtp")
	}
	return s, nil
}

// stats are the sink's distinct messages delivered, second copies and raw attempts.
func (s *chaosSink) stats() (unique, duplicates, raw int64) {
	if s.http != nil {
		st := s.http.Stats()
		return st.Unique, st.Duplicates, st.RawAttempts
	}
	st := s.smtp.Stats()
	return st.Unique, st.Duplicates, st.RawAttempts
}

func (s *chaosSink) delivered() int64 { u, _, _ := s.stats(); return u }

func (s *chaosSink) close() {
	if s.http != nil {
		s.http.Close()
	}
	if s.smtp != nil {
		s.smtp.Close()
	}
}

// terminate stops the last processes of a run with SIGTERM, as a deploy does, and
// returns what their exits say. It first waits until each has registered as an
// executor: a process signalled before its signal handling is in place dies of
// the signal, and one signalled while it starts stops without having run, so
// neither exit would say anything about the shutdown the run checks (and the run
// may well have settled before the last processes came up). since is a moment
// before they were started.
func terminate(ctx context.Context, q *queries, since time.Time, procs ...*exec.Cmd) error {
	pids := make([]int32, len(procs))
	for i, p := range procs {
		pids[i] = int32(p.Process.Pid)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n, err := q.ChaosExecutorsRegistered(ctx, harnessstore.ChaosExecutorsRegisteredParams{Pids: pids, Since: since})
		if err != nil {
			return err
		}
		if n >= int64(len(procs)) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of the last %d processes registered as executors in 2 minutes", n, len(procs))
		}
		if !sleepCtx(ctx, 20*time.Millisecond) {
			return ctx.Err()
		}
	}
	for _, p := range procs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	var werr error
	for _, p := range procs {
		werr = errors.Join(werr, p.Wait())
	}
	return werr
}

// apiRun is the one `sendonce serve` process (API and executor) of the runs that
// drive a campaign through the API on a fixed port and SIGKILL the process
// between calls (-ab, -localtime), with the idempotent HTTP sink (keeping each
// delivery) as its provider.
type apiRun struct {
	name    string // the run's name in its messages, e.g. "ab"
	bin     string
	env     []string
	logTo   io.Writer
	stderr  io.Writer // where each kill is reported
	snk     *sink.HTTP
	cl      *messagesClient
	child   *exec.Cmd // nil between a kill and the next serve
	started time.Time // when child was started
	start   time.Time // when the run began
}

// newAPIRun starts the sink and picks the API's port; token is the account's
// API key the client calls with.
func newAPIRun(name, bin string, o chaosOptions, dbURL, token string, latency time.Duration, stderr io.Writer) (*apiRun, error) {
	r := &apiRun{name: name, bin: bin, logTo: io.Discard, stderr: stderr, start: time.Now(),
		snk: sink.NewHTTP(sink.HTTPOptions{KeepDeliveries: true, Latency: latency})}
	sinkURL, err := r.snk.Listen("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.snk.Close()
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	r.env = append(o.serveEnv(dbURL), "SENDONCE_HTTP_PROVIDER_URL="+sinkURL+"/send",
		"SENDONCE_ADDR="+addr, "SENDONCE_API_RATE_PER_SECOND=0")
	if o.Verbose {
		r.logTo = stderr
	}
	r.cl = &messagesClient{base: "http://" + addr, token: token, http: &http.Client{Timeout: 10 * time.Second}}
	return r, nil
}

// delivered is how many job ids the sink has accepted.
func (r *apiRun) delivered() int64 { return r.snk.Stats().Unique }

// serve starts the process at the given send rate (0: unlimited) and waits until
// its API is ready.
func (r *apiRun) serve(ctx context.Context, rate float64) error {
	env := append(append([]string(nil), r.env...), "SENDONCE_RATE_PER_SECOND="+strconv.FormatFloat(rate, 'f', 0, 64))
	r.started = time.Now()
	c, err := startProcess(r.bin, env, r.logTo, "serve")
	if err != nil {
		return err
	}
	r.child = c
	return r.cl.waitReady(ctx, time.Minute)
}

// kill SIGKILLs the process.
func (r *apiRun) kill(what string) {
	_ = r.child.Process.Kill() // SIGKILL
	_ = r.child.Wait()
	r.child = nil
	fmt.Fprintf(r.stderr, "chaos: %s kill (%s) at %s, delivered %d\n", r.name, what, time.Since(r.start).Round(time.Millisecond), r.delivered())
}

// terminate stops the last process with SIGTERM (terminate).
func (r *apiRun) terminate(ctx context.Context, q *queries) error {
	c := r.child
	r.child = nil
	if err := terminate(ctx, q, r.started, c); err != nil {
		return fmt.Errorf("chaos -%s: the last serve did not exit cleanly on SIGTERM: %w", r.name, err)
	}
	return nil
}

// close kills a process still running and stops the sink.
func (r *apiRun) close() {
	if r.child != nil {
		_ = r.child.Process.Kill()
		_ = r.child.Wait()
	}
	r.snk.Close()
}
