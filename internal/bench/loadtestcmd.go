package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/sink"
)

// Service is what the load test takes from the command that runs it: the service's
// own ways to open its database and to run, so the test measures them as deployed.
type Service struct {
	// OpenMigrated opens the pool serve would open with cfg and applies pending migrations.
	OpenMigrated func(ctx context.Context, cfg config.Config) (*pgxpool.Pool, error)
	// Serve runs the API and the executor with cfg until ctx ends, calling onListen
	// with the API's address once it listens.
	Serve func(ctx context.Context, cfg config.Config, onListen func(net.Addr)) error
}

// LoadtestCommand is `sendonce loadtest` (hidden; `make loadtest`): the real service
// (API and executor, in process, on 127.0.0.1:0) on a throwaway cluster, sending a
// campaign through the HTTP provider to an in-process sink, while vegeta drives
// concurrent API clients. The per-key rate limit is off (SENDONCE_API_RATE_PER_SECOND=0):
// the test measures the service, not the limiter.
func LoadtestCommand(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer, svc Service) error {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	var lo LoadOptions
	recipients := fs.Int("recipients", 100_000, "subscribers of the campaign sending during the test")
	fs.IntVar(&lo.Clients, "clients", 200, "concurrent API clients")
	fs.IntVar(&lo.Rate, "rate", 0, "total requests per second (0: closed loop, each client as fast as it is answered)")
	fs.DurationVar(&lo.Duration, "duration", 60*time.Second, "how long the clients run")
	idle := fs.Duration("idle", 3*time.Second, "how long the executor's idle send rate is measured, before the clients start")
	fs.BoolVar(&lo.IgnoreRetryAfter, "ignore-retry-after", false, "closed-loop clients send again at once after a 503")
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
	pool, err := svc.OpenMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	accountID, key, imported, err := Seed(ctx, pool, *recipients)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# loadtest: %d subscribers imported in %.1fs; clients=%d rate=%d duration=%s batch_size=%d workers=%d db_max_conns=%d executor_db_conns=%d api_rate_per_second=0\n",
		imported.Rows, imported.Secs, lo.Clients, lo.Rate, lo.Duration, cfg.BatchSize, cfg.Workers, cfg.DBMaxConns, cfg.ExecutorDBConns)
	lo.APIKey = key
	if lo.CampaignID, err = NewCampaign(ctx, pool, accountID, "loadtest"); err != nil {
		return err
	}

	provider := sink.NewHTTP(sink.HTTPOptions{})
	sinkURL, err := provider.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer provider.Close()
	secret := make([]byte, 16)
	rand.Read(secret)
	cfg.Addr = "127.0.0.1:0"
	cfg.APIRatePerSecond = 0
	cfg.Provider, cfg.HTTPProviderURL = "http", sinkURL+"/send"
	cfg.UnsubscribeSecret = []string{"load:" + hex.EncodeToString(secret)}
	cfg.LogLevel = "warn"

	svcCtx, stopService := context.WithCancel(ctx)
	defer stopService()
	listening := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- svc.Serve(svcCtx, cfg, func(a net.Addr) { listening <- a })
	}()
	select {
	case a := <-listening:
		lo.BaseURL = "http://" + a.String()
	case err := <-done:
		return fmt.Errorf("service: %w", err)
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

	stopService()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("service: %w", err)
	}
	for _, k := range res.Kinds {
		if k.Errors > 0 {
			return fmt.Errorf("loadtest: %d %s requests failed", k.Errors, k.Name)
		}
	}
	return nil
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
