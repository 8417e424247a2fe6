// Command failover is the harness behind `make failover`: etcd and two PostgreSQL
// nodes under Patroni on 127.0.0.1, sendonce (API+executor and a second executor)
// on a multi-host URL with target_session_attrs=read-write, a campaign to the
// idempotent HTTP sink, and the primary's node killed (Patroni and PostgreSQL,
// SIGKILL) or its Patroni stopped mid-send. It prints one line for scripts:
//
//	failover: recipients=… duplicates=… lost=… unknown=… stall_s=… replays=… mode=… replication=…
//
// and exits non-zero when a recipient was lost or delivered twice, or the
// delivery invariant does not hold.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/postgres"
)

type options struct {
	sendonce     string
	recipients   int
	mode         string // kill or stop
	async        bool
	ttl          int
	loopWait     int
	retryTimeout int
	killAt       float64
	keep         bool
	timeout      time.Duration
	lease        time.Duration
	provider     string
	lag          time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.sendonce, "sendonce", "bin/sendonce", "the sendonce binary")
	flag.IntVar(&o.recipients, "recipients", 20000, "campaign size")
	flag.StringVar(&o.provider, "provider", "http", "http: the idempotent HTTP sink; smtp: the SMTP sink, which cannot deduplicate")
	flag.StringVar(&o.mode, "mode", "kill", "kill: SIGKILL the leader's Patroni and PostgreSQL; stop: SIGTERM the leader's Patroni (clean demotion)")
	flag.BoolVar(&o.async, "async", false, "asynchronous replication (Patroni's default) instead of synchronous_mode: true")
	flag.IntVar(&o.ttl, "ttl", 30, "Patroni ttl (s): a dead leader's key expires after it")
	flag.IntVar(&o.loopWait, "loop-wait", 10, "Patroni loop_wait (s)")
	flag.IntVar(&o.retryTimeout, "retry-timeout", 10, "Patroni retry_timeout (s)")
	flag.Float64Var(&o.killAt, "kill-at", 0.3, "fraction of recipients delivered before the kill")
	flag.BoolVar(&o.keep, "keep", false, "keep the run folder (logs, data) afterwards")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long")
	flag.DurationVar(&o.lease, "lease", 0, "SENDONCE_LEASE for the service (0: its default, 2m); the provider timeout is set to a third of it")
	flag.DurationVar(&o.lag, "lag", 0, "with -async: stop the standby's WAL receiver this long before the kill, so the "+
		"new primary lacks those commits (what asynchronous replication can lose)")
	flag.Parse()
	if o.lag > 0 && !o.async {
		fmt.Fprintln(os.Stderr, "failover: -lag needs -async (a synchronous standby that stops receiving stops every commit)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	log := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s failover: "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}
	bin, err := exec.LookPath(o.sendonce)
	if err != nil {
		return err
	}
	if o.sendonce, err = filepath.Abs(bin); err != nil {
		return err
	}
	began := time.Now()
	c, err := startCluster(ctx, o)
	if c != nil {
		defer func() {
			c.stop()
			if o.keep || err != nil {
				log("run folder kept: %s", c.dir)
			} else {
				os.RemoveAll(c.dir)
			}
		}()
	}
	if err != nil {
		return err
	}
	log("cluster up in %.1fs: leader %s", time.Since(began).Seconds(), c.leader().name)

	url := c.url("postgres")
	pool, err := postgres.Open(ctx, url, 4)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return err
	}
	acc, key, err := account.NewService(pool).Create(ctx, "failover")
	if err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `INSERT INTO subscribers (account_id, email, email_lower, name, status)
		SELECT $1, 'r' || i || '@example.com', 'r' || i || '@example.com', 'R' || i, 'confirmed'
		FROM generate_series(1, $2::int) i`, acc.ID, o.recipients); err != nil {
		return err
	}

	s, err := newTarget(ctx, o.provider)
	if err != nil {
		return err
	}
	defer s.close()

	// Paced so the campaign lasts about 20 s without a failure: the kill lands mid-send.
	rate := max(o.recipients/40, 10)
	apiPort := freePort()
	env := []string{
		"SENDONCE_DATABASE_URL=" + url,
		"SENDONCE_UNSUBSCRIBE_SECRET=k1:failover-secret-0123456789abcdef",
		"SENDONCE_LOG_FORMAT=text",
		"SENDONCE_TICK=1s",
		fmt.Sprintf("SENDONCE_RATE_PER_SECOND=%d", rate),
	}
	env = append(env, s.env()...)
	if o.lease > 0 {
		env = append(env, "SENDONCE_LEASE="+o.lease.String(), "SENDONCE_HTTP_PROVIDER_TIMEOUT="+(o.lease/3).String())
	}
	var serves []*proc
	defer func() {
		for _, p := range serves {
			p.stop(syscall.SIGTERM, 40*time.Second)
		}
	}()
	for i, args := range [][]string{{"serve"}, {"serve", "--api=false"}} {
		e := append(env[:len(env):len(env)], fmt.Sprintf("SENDONCE_ADDR=127.0.0.1:%d", apiPort))
		p, err := start(fmt.Sprintf("sendonce%d", i+1), c.dir, nil, e, o.sendonce, args...)
		if err != nil {
			return err
		}
		serves = append(serves, p)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", apiPort)
	if err := waitHTTP(ctx, base+"/readyz", 60*time.Second); err != nil {
		return err
	}
	id, err := campaign(base, key)
	if err != nil {
		return err
	}
	log("campaign %d approved: %d recipients at %d/s per process", id, o.recipients, rate)

	for s.counts().unique < int64(float64(o.recipients)*o.killAt) {
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	leader := c.leader()
	if leader == nil {
		return errors.New("no leader to kill")
	}
	atRisk := int64(-1)
	resumeAfterKill := func() {}
	if o.lag > 0 {
		var standby *node
		for _, n := range c.nodes {
			if n != leader {
				standby = n
			}
		}
		resume, err := c.pauseReplication(standby)
		if err != nil {
			return err
		}
		before := s.counts().unique
		log("%s's WAL receiver stopped at %d delivered; the kill comes in %s", standby.name, before, o.lag)
		if err := sleep(ctx, o.lag); err != nil {
			return err
		}
		atRisk = s.counts().unique - before
		// Running again once the primary is dead: Patroni's promotion waits for the
		// WAL receiver to stop, which a stopped process never does.
		defer resume()
		resumeAfterKill = resume
	}
	killed := time.Now()
	switch o.mode {
	case "kill":
		err = c.killNode(leader)
	case "stop":
		leader.patroni.stop(syscall.SIGTERM, 60*time.Second)
	default:
		err = fmt.Errorf("unknown -mode %q", o.mode)
	}
	resumeAfterKill()
	if err != nil {
		return err
	}
	log("%s %s at %d delivered", o.mode, leader.name, s.counts().unique)
	// When Patroni promoted the other node, to tell its share of the stall from ours.
	promoted := make(chan time.Duration, 1)
	go func() {
		for ctx.Err() == nil {
			if n := c.leader(); n != nil && n != leader {
				promoted <- time.Since(killed)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		promoted <- -1
	}()

	// Sent, as the new primary says.
	var status string
	for status != "sent" {
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("campaign not sent (status %q, %d delivered): %w", status, s.counts().unique, err)
		}
		_ = pool.QueryRow(ctx, `SELECT status FROM campaigns WHERE id = $1`, id).Scan(&status)
	}
	newLeader := c.leader()
	promote := time.Duration(-1) // never promoted while the campaign finished: printed as -1
	select {
	case promote = <-promoted:
	default:
	}
	st := s.counts()
	var unknown int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'unknown'`, id).Scan(&unknown); err != nil {
		return err
	}
	invErr := invariant.Check(ctx, pool, invariant.Options{Delivered: s.delivered(),
		Recipients: map[int64]int64{id: int64(o.recipients)}})
	// Over SMTP a row reported unknown may or may not have reached its recipient.
	lost := int64(o.recipients) - st.unique
	if o.provider == "smtp" {
		lost = max(0, lost-unknown)
	}
	replication := "sync"
	if o.async {
		replication = "async"
	}
	name := "none"
	if newLeader != nil {
		name = newLeader.name
	}
	// resume_s: from the kill to the first delivery after the promotion; stall_s can be
	// longer when rows wait for their lease after sending resumed.
	resume := time.Duration(-1)
	if promote >= 0 {
		if f := s.first(killed.Add(promote)); !f.IsZero() {
			resume = f.Sub(killed)
		}
	}
	fmt.Printf("failover: recipients=%d duplicates=%d lost=%d unknown=%d stall_s=%.1f promote_s=%.1f resume_s=%.1f "+
		"replays=%d provider=%s mode=%s replication=%s new_leader=%s\n", o.recipients, st.duplicates, lost, unknown,
		s.stall(killed).Seconds(), promote.Seconds(), resume.Seconds(), st.replays, o.provider, o.mode, replication, name)
	if atRisk >= 0 {
		// What the new primary lacked: the claims and acknowledgements of the deliveries
		// made while the standby was cut off. Their rows come back in flight or queued
		// and are sent again: the idempotent sink drops the replays (replays), SMTP
		// delivers second copies (duplicates) that no unknown row reports.
		fmt.Printf("failover: async lag_s=%.1f delivered_while_cut_off=%d replays=%d duplicates=%d unknown=%d\n",
			o.lag.Seconds(), atRisk, st.replays, st.duplicates, unknown)
		if invErr != nil {
			return fmt.Errorf("delivery invariant: %w", invErr)
		}
		if lost != 0 {
			return fmt.Errorf("%d lost", lost)
		}
		return nil // duplicates are what this run shows, not a failure of it
	}
	switch {
	case invErr != nil:
		return fmt.Errorf("delivery invariant: %w", invErr)
	case lost != 0 || (o.provider == "http" && st.duplicates != 0) || st.duplicates > unknown:
		// Exactly once through the idempotent sink; over SMTP no second copy beyond the rows reported unknown.
		return fmt.Errorf("%d duplicates, %d lost, %d unknown", st.duplicates, lost, unknown)
	}
	return nil
}

func listen(h http.Handler) (string, error) {
	port := freePort()
	srv := &http.Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for range 100 {
		select {
		case err := <-errc:
			return "", err
		default:
		}
		if resp, err := http.Get(url + "/stats"); err == nil {
			resp.Body.Close()
			return url, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", errors.New("sink did not listen")
}

// campaign creates and approves a campaign to every confirmed subscriber.
func campaign(base, key string) (int64, error) {
	call := func(path string, body any) (map[string]any, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(b))
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
	c, err := call("/v1/campaigns", map[string]any{"name": "failover", "subject": "Hi {{.Name}}",
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
