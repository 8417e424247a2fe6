package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/sendonce/sendonce/internal/bench"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sink"
)

// Command is `sendonce-harness loadtest` (`make loadtest`): the real service, `sendonce
// serve` of the product binary bin (API and executor in one process, on a free
// loopback port), on a throwaway cluster, sending a campaign through the HTTP
// provider to a sink in this process, while vegeta drives concurrent API clients
// from this process too. The service reads the settings of this environment
// (SENDONCE_BATCH_SIZE, SENDONCE_WORKERS, …, as cfg shows them), but for its
// database, address, provider and the per-key rate limit, which is off
// (SENDONCE_API_RATE_PER_SECOND=0): the test measures the service, not the limiter.
func Command(ctx context.Context, bin string, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	var lo LoadOptions
	recipients := fs.Int("recipients", 100_000, "subscribers of the campaign sending during the test")
	fs.IntVar(&lo.Clients, "clients", 200, "concurrent API clients")
	fs.IntVar(&lo.Rate, "rate", 0, "total requests per second (0: closed loop, each client as fast as it is answered)")
	fs.DurationVar(&lo.Duration, "duration", 60*time.Second, "how long the clients run")
	idle := fs.Duration("idle", 3*time.Second, "how long the executor's idle send rate is measured, before the clients start")
	fs.BoolVar(&lo.IgnoreRetryAfter, "ignore-retry-after", false, "closed-loop clients send again at once after a 503")
	burst := fs.Int("burst", 0, "before the clients start, send bursts of this many concurrent requests (POST /v1/events/stream-tokens) and print what each saw (0: none)")
	bursts := fs.Int("bursts", 5, "how many bursts, a second apart (with -burst)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.DatabaseURL == "" {
		url, stop, err := pgcluster.Throwaway(ctx, true, stderr)
		if err != nil {
			return err
		}
		defer stop()
		cfg.DatabaseURL = url
	}
	// Migrated here, before serve starts, because the campaign is seeded first.
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pool, err := postgres.Open(openCtx, cfg.DatabaseURL, cfg.DBMaxConns)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return err
	}
	accountID, key, imported, err := bench.Seed(ctx, pool, *recipients)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# loadtest: %d subscribers imported in %.1fs; clients=%d rate=%d duration=%s batch_size=%d workers=%d db_max_conns=%d executor_db_conns=%d api_rate_per_second=0\n",
		imported.Rows, imported.Secs, lo.Clients, lo.Rate, lo.Duration, cfg.BatchSize, cfg.Workers, cfg.DBMaxConns, cfg.ExecutorDBConns)
	lo.APIKey = key
	if lo.CampaignID, err = bench.NewCampaign(ctx, pool, accountID, "loadtest"); err != nil {
		return err
	}

	provider := sink.NewHTTP(sink.HTTPOptions{})
	sinkURL, err := provider.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer provider.Close()
	addr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	secret := make([]byte, 16)
	rand.Read(secret)
	serve := exec.Command(bin, "serve")
	serve.Env = append(os.Environ(),
		"SENDONCE_DATABASE_URL="+cfg.DatabaseURL,
		"SENDONCE_ADDR="+addr,
		"SENDONCE_API_RATE_PER_SECOND=0",
		"SENDONCE_PROVIDER=http",
		"SENDONCE_HTTP_PROVIDER_URL="+sinkURL+"/send",
		"SENDONCE_UNSUBSCRIBE_SECRET=load:"+hex.EncodeToString(secret),
		"SENDONCE_LOG_LEVEL=warn")
	serve.Stdout, serve.Stderr = io.Discard, stderr
	// If the harness dies, the service dies with it.
	serve.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := serve.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	defer serve.Process.Kill() //nolint:errcheck // on an early return; after a clean exit it has no process left
	lo.BaseURL = "http://" + addr
	if err := waitReady(ctx, lo.BaseURL, exited); err != nil {
		return err
	}

	campaigns := campaign.NewService(pool)
	if _, err := campaigns.Approve(ctx, accountID, lo.CampaignID, nil); err != nil {
		return err
	}
	delivered := func() int64 { return provider.Stats().Unique }
	idleRate, err := measureIdle(ctx, delivered, *idle)
	if err != nil {
		return err
	}
	// Bursts while the campaign sends, before the clients: served, shed, latencies.
	for i := range *bursts * min(*burst, 1) {
		r, err := Burst(ctx, lo.BaseURL, key, *burst)
		if err != nil {
			return err
		}
		PrintBurst(stdout, i+1, *burst, r)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	if *burst > 0 && lo.Duration == 0 {
		fmt.Fprintln(stdout, "# loadtest: -duration 0, no clients")
		return nil
	}
	// Read once the campaign is sending (its recipients built), past the counts' cache.
	st, err := campaigns.Stats(ctx, accountID, lo.CampaignID)
	if err != nil {
		return err
	}
	during := sampleRate(ctx, delivered, st.Total)
	res, err := Load(ctx, lo)
	loadRate, sentDuring, finished := during()
	if err != nil {
		return err
	}
	PrintLoad(stdout, res, lo.Duration)
	ratio := 0.0
	if idleRate > 0 {
		ratio = loadRate / idleRate
	}
	note := ""
	if finished {
		note = " (the campaign finished during the load: the rate is until it did)"
	}
	fmt.Fprintf(stdout, "loadtest executor: idle_per_s=%.0f load_per_s=%.0f ratio=%.2f sent_during_load=%d%s\n",
		idleRate, loadRate, ratio, sentDuring, note)
	if st, err = campaigns.Stats(ctx, accountID, lo.CampaignID); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# campaign after the test: status=%s sent=%d of %d\n", st.Status, st.Counts["sent"], st.Total)

	// Stopped as a deploy stops it; an unclean exit fails the test.
	_ = serve.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		return fmt.Errorf("sendonce serve: %w", err)
	}
	for _, k := range res.Kinds {
		if k.Errors > 0 {
			return fmt.Errorf("loadtest: %d %s requests failed", k.Errors, k.Name)
		}
	}
	return nil
}

// freeLoopbackAddr is a loopback address with a port free a moment ago, for the
// service to listen on (it takes its address from SENDONCE_ADDR, not from us).
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitReady returns once the service at base answers /readyz with 200, or with
// an error when it exited first or did not within a minute.
func waitReady(ctx context.Context, base string, exited <-chan error) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(time.Minute)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("loadtest: sendonce serve was not ready within a minute")
		}
		select {
		case err := <-exited:
			return fmt.Errorf("loadtest: sendonce serve exited before it was ready: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// measureIdle waits for the campaign's first delivery and a second of warm-up, then
// returns the deliveries per second over d with no API client running.
func measureIdle(ctx context.Context, delivered func() int64, d time.Duration) (float64, error) {
	deadline := time.Now().Add(time.Minute)
	for delivered() == 0 {
		if time.Now().After(deadline) {
			return 0, errors.New("loadtest: the campaign sent nothing within a minute")
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(time.Second):
	}
	n0, t0 := delivered(), time.Now()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	return float64(delivered()-n0) / time.Since(t0).Seconds(), nil
}

// sampleRate starts watching deliveries; the function it returns stops watching
// and gives the deliveries per second since the start, how many, and whether the
// campaign's total was reached (the rate is then until the first sample that saw it,
// so the idle tail after the last message does not count).
func sampleRate(ctx context.Context, delivered func() int64, total int64) func() (float64, int64, bool) {
	n0, t0 := delivered(), time.Now()
	var reached time.Time
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-stop:
				return
			case now := <-tick.C:
				if total > 0 && delivered() >= total {
					reached = now
					return
				}
			}
		}
	}()
	return func() (float64, int64, bool) {
		end := time.Now()
		close(stop)
		<-done
		n := delivered() - n0
		if !reached.IsZero() {
			end = reached
		}
		return float64(n) / end.Sub(t0).Seconds(), n, !reached.IsZero()
	}
}
