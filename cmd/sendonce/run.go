package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sendonce/sendonce/internal/bounce"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/logging"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/startstop"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/unsubscribe"
	"github.com/sendonce/sendonce/internal/webhook"
)

type pgxPool = pgxpool.Pool

// Options say which parts of the service run in this process.
type Options struct {
	API      bool
	Executor bool
	// OnListen, when set, is told the address the API listens on (tests use port 0).
	OnListen func(net.Addr)
	// OnMetricsListen is OnListen for the metrics listener (SENDONCE_METRICS_ADDR).
	OnMetricsListen func(net.Addr)
}

// run owns the pool, migrations, executor, HTTP server and shutdown. It returns when
// ctx is cancelled and everything has stopped, or on the first fatal error.
func run(ctx context.Context, cfg config.Config, opts Options, stdout, stderr io.Writer) error {
	log := logging.New(stderr, cfg.LogLevel, cfg.LogFormat)
	// A stop asked for while starting (SIGTERM during the pool's dial, the
	// migrations or the executor's start) cancels ctx, and the step under way fails
	// with it: that is an orderly stop, not a failed start, so the process exits 0.
	// What was opened so far is closed by the defers.
	starting := func(err error) error {
		if err != nil && ctx.Err() != nil {
			log.Info("stopped while starting", "err", err)
			return nil
		}
		return err
	}
	// Both parts need the key: the executor signs links, the API verifies them. Refuse
	// before touching the database, so the mistake shows at once.
	if (opts.API || opts.Executor) && len(cfg.UnsubscribeSecret) == 0 {
		return fmt.Errorf("configuration: %w", token.ErrNoKey)
	}
	// One key ring signs every link of this process (unsubscribe, tracking,
	// confirmation) and keys its Message-IDs; the API verifies what the executor signs.
	keys, err := token.NewRing(cfg.UnsubscribeSecret)
	if err != nil {
		return fmt.Errorf("configuration: SENDONCE_UNSUBSCRIBE_SECRET: %w", err)
	}
	signer := unsubscribe.NewSigner(keys)
	ring, err := sender.ParseKeyRing(cfg.SecretsKey)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	pool, n, err := openMigrated(ctx, cfg)
	if err != nil {
		return starting(err)
	}
	defer pool.Close()
	if n > 0 {
		log.Info("migrations applied", "count", n)
	}
	// A ring that cannot decrypt a stored credential would fail every send of that
	// sender: refuse to start instead.
	if err := sender.CheckKeys(ctx, pool, ring); err != nil {
		return starting(fmt.Errorf("configuration: %w", err))
	}
	if err := bounce.CheckKeys(ctx, pool, ring); err != nil {
		return starting(fmt.Errorf("configuration: %w", err))
	}
	// Senders are aimed by tenants: their connections go through the same guard as
	// event deliveries, with the same development switch.
	// An smtp sender with a bounce domain names each send in its Return-Path, signed
	// with the same keys; the bounce mailbox reader (below) reads them back.
	verp := bounce.NewVERP(keys)
	senders := sender.NewService(pool, ring, sender.WithGuard(egress.Guard{AllowPrivate: cfg.EventAllowPrivate}),
		sender.WithSMTPChunking(cfg.SMTPChunking), sender.WithReturnPath(verp.Address))
	// One router per process: the executor's sends and the API's test sends share
	// the built sender providers; closed last, with the environment's provider.
	routes := sender.NewRouter(senders, log)
	defer routes.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	errc := make(chan error, 2)

	// One provider and one message builder per process, for the executor's sends and
	// the API's test sends alike; the provider is closed after both have stopped.
	p, err := newProvider(cfg.Providers, log)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	defer p.Close() // on the early returns; a second Close does nothing
	mb, err := messageBuilder(cfg, keys)
	if err != nil {
		return err
	}

	// The process's one LISTEN connection, shared by the executor (campaign
	// notifications) and the API (revocations, which end event streams at once):
	// on SENDONCE_DIRECT_DATABASE_URL when set, since a transaction pooler would
	// drop the LISTEN. Both register before it runs, below.
	lp, err := listenPool(ctx, cfg)
	if err != nil {
		return starting(err)
	}
	defer closePool(lp)
	listener := postgres.NewListener(pool, log)
	if lp != nil {
		listener = postgres.NewListener(lp, log)
	}

	// Every background service of this process, started in this order by one
	// runner and stopped by it all at once.
	var services []startstop.Service
	if opts.Executor {
		// The executor gets its own pool: sharing one with the API let 200 busy
		// clients starve sending of connections (docs/performance.md).
		execCfg := cfg
		execCfg.DBMaxConns = cfg.ExecutorDBConns
		execPool, err := openWithTimeout(ctx, execCfg)
		if err != nil {
			return starting(err)
		}
		// Deferred after pool's, so closed before it, once the executor has stopped.
		defer execPool.Close()
		svcs, err := executorServices(cfg, execPool, pool, listener, p, executorSenders{routes}, mb, signer, log, reg)
		if err != nil {
			return starting(err)
		}
		services = append(services, svcs...)
		// The accounts' bounce mailboxes are read where sending runs; a mailbox
		// host is a tenant's choice, so its connections go through the guard.
		hooks := webhook.NewService(pool, webhook.Options{SoftBounceLimit: cfg.SoftBounceLimit,
			SoftBounceWindow: cfg.SoftBounceWindow})
		mailboxes := bounce.NewService(pool, ring, verp, hooks, bounce.Options{
			Guard: egress.Guard{AllowPrivate: cfg.EventAllowPrivate}, Logger: log})
		services = append(services, startstop.NewLoop(mailboxes.Run))
	}

	var api *http.Server
	var apiListener net.Listener
	if opts.API {
		blobs, err := mediaStore(cfg)
		if err != nil {
			return starting(err)
		}
		deps, tracker, err := apiDeps(cfg, shared{pool: pool, log: log, reg: reg, listener: listener, signer: signer, credentials: ring,
			senders: senders, routes: routes, provider: p, messages: mb, media: blobs})
		if err != nil {
			return err
		}
		// Clicks and opens are held in memory and written in batches by this
		// flusher; the hits still held at shutdown are written after the HTTP
		// server stops (a crash loses at most the last second or two of them).
		if err := tracker.Register(reg); err != nil {
			return err
		}
		services = append(services, startstop.NewLoop(tracker.Run).Finally(func(ctx context.Context) error {
			_, err := tracker.Flush(ctx, true)
			return err
		}))
		apiOpts := apiOptions(cfg)
		handler, err := httpapi.NewServer(deps, apiOpts)
		if err != nil {
			return err
		}
		if apiListener, err = net.Listen("tcp", cfg.Addr); err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
		}
		defer apiListener.Close() // on the early returns; Serve owns it after
		api = httpapi.HTTPServer(handler, apiOpts)
	}
	if opts.API || opts.Executor {
		// Last: every part has registered its channels (Listener.Handle) by now.
		services = append(services, startstop.NewLoop(listener.Run))
	}

	runner := &startstop.Runner{StopTimeout: cfg.ShutdownTimeout}
	// On the early returns below; after shutdown it does nothing.
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		_ = runner.Stop(stopCtx)
	}()
	if err := runner.Start(ctx, services...); err != nil {
		return starting(err)
	}
	if opts.Executor {
		log.Info("executor started")
	}

	var stops []func(context.Context) error
	if api != nil {
		log.Info("api listening", "addr", apiListener.Addr().String())
		if opts.OnListen != nil {
			opts.OnListen(apiListener.Addr())
		}
		go func() {
			if err := api.Serve(apiListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
		stops = append(stops, api.Shutdown)
	}

	if cfg.MetricsAddr != "" {
		stop, err := serveMetrics(cfg, pool, reg, log, opts.OnMetricsListen, errc)
		if err != nil {
			if api != nil {
				_ = api.Close()
			}
			return err
		}
		stops = append([]func(context.Context) error{stop}, stops...)
	}

	// The HTTP servers stop first, so no request lands on a stopped service; then
	// every background service at once (the executor finishes or releases what it
	// holds, the tracker writes the hits it holds); last, once neither the API nor
	// the executor can send, the providers.
	stops = append(stops, runner.Stop, func(ctx context.Context) error {
		return errors.Join(closeProvider(ctx, p), routes.Close())
	})

	select {
	case <-ctx.Done():
		log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	case err := <-errc:
		log.Error("fatal", "err", err)
		_ = shutdown(cfg, log, stops) // the fatal error is the one to return; shutdown logs its own
		return err
	}
	return shutdown(cfg, log, stops)
}

func shutdown(cfg config.Config, log *slog.Logger, stops []func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	var errs []error
	for _, stop := range stops {
		if err := stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		log.Error("shutdown", "err", err)
		return err
	}
	log.Info("stopped")
	return nil
}

// serveMetrics serves /metrics on SENDONCE_METRICS_ADDR: a port that can stay off
// the network clients reach, since the metrics carry no authentication. It also
// answers the probes, /healthz and /readyz, so an executor-only process (no API
// listener) can be probed and scraped like the API. It returns the listener's
// shutdown.
func serveMetrics(cfg config.Config, pool *pgxpool.Pool, reg *prometheus.Registry, log *slog.Logger,
	onListen func(net.Addr), errc chan<- error) (func(context.Context) error, error) {
	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on SENDONCE_METRICS_ADDR %s: %w", cfg.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	probes := httpapi.Probes(pool, log)
	mux.Handle("GET /healthz", probes)
	mux.Handle("GET /readyz", probes)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second}
	log.Info("metrics listening", "addr", ln.Addr().String())
	if onListen != nil {
		onListen(ln.Addr())
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	return srv.Shutdown, nil
}
