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
	kinds, err := Load(ctx, lo)
	if err != nil {
		return err
	}
	PrintLoad(stdout, kinds, lo.Duration)
	st, err := campaigns.Stats(ctx, accountID, lo.CampaignID)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# campaign during the test: status=%s sent=%d of %d\n", st.Status, st.Counts["sent"], st.Total)

	stopService()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("service: %w", err)
	}
	for _, k := range kinds {
		if k.Errors > 0 {
			return fmt.Errorf("loadtest: %d %s requests failed", k.Errors, k.Name)
		}
	}
	return nil
}
