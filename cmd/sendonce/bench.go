package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/sendonce/sendonce/internal/bench"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/postgres"
)

// runBench is `sendonce bench`: import, build, send through the real executor and
// the raw claim/ack ceiling, on a throwaway cluster unless SENDONCE_DATABASE_URL is set.
func runBench(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o bench.Options
	var durable bool
	fs.IntVar(&o.Recipients, "recipients", 100_000, "subscribers imported and sent to")
	fs.IntVar(&o.BatchSize, "batch-size", cfg.BatchSize, "executor claim size (default SENDONCE_BATCH_SIZE)")
	fs.IntVar(&o.Workers, "workers", cfg.Workers, "executor workers (default SENDONCE_WORKERS)")
	fs.DurationVar(&o.Latency, "latency", 0, "how long the fake provider takes to accept each message, e.g. 5ms")
	fs.StringVar(&o.Provider, "provider", "instant", "instant, or smtp: go-mail to an in-process SMTP sink on loopback")
	fs.IntVar(&o.RawConns, "raw-conns", 2, "connections of the raw claim/ack loop (the executor claims on one and acknowledges on another)")
	fs.DurationVar(&o.AckInterval, "ack-interval", 0, "executor: longest wait before acknowledging (0: its default)")
	fs.IntVar(&o.AckBatch, "ack-batch", 0, "executor: most rows per acknowledgement (0: its default)")
	fs.IntVar(&o.Executors, "executors", 1, "above 1: also print the throughput curve for 1, 2, 4, … up to N executors on one database")
	sinkWhere := fs.String("sink", "process", "with --provider smtp: process (a child `sendonce sink smtp`, so its CPU is not the app's) or inprocess")
	fs.BoolVar(&durable, "durable", false, "throwaway cluster with stock durability (default: fsync=off, synchronous_commit=off)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	switch {
	case o.Provider != "smtp" || *sinkWhere == "inprocess":
	case *sinkWhere == "process":
		addr, stop, err := startSink(ctx, o.Latency)
		if err != nil {
			return err
		}
		defer stop()
		o.SMTPAddr = addr
	default:
		return fmt.Errorf("bench: --sink must be process or inprocess, not %q", *sinkWhere)
	}
	if len(cfg.UnsubscribeSecret) == 0 {
		// Links are signed as serve signs them, which needs a key; a throwaway
		// one is enough for figures.
		cfg.UnsubscribeSecret = []string{"bench:" + rand.Text()}
	}
	links, err := unsubscribeLinks(cfg)
	if err != nil {
		return err
	}
	o.Links = links
	url := cfg.DatabaseURL
	o.Database = "SENDONCE_DATABASE_URL"
	if url == "" {
		u, stop, err := throwawayCluster(ctx, !durable, stderr)
		if err != nil {
			return err
		}
		defer stop()
		url = u
		o.Database = "throwaway cluster, stock settings"
		if !durable {
			o.Database = "throwaway cluster, fsync=off synchronous_commit=off full_page_writes=off"
		}
	}
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pool, err := postgres.Open(openCtx, url, max(cfg.DBMaxConns, int32(o.RawConns)+4))
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return err
	}
	_, err = bench.Run(ctx, pool, o, stdout)
	return err
}

// throwawayCluster starts a PostgreSQL cluster in a fresh temporary folder and
// returns a URL to a new database on it and a function that stops and removes it.
func throwawayCluster(ctx context.Context, fast bool, stderr io.Writer) (string, func(), error) {
	dir, err := pgcluster.TempDataDir("sendonce-bench-")
	if err != nil {
		return "", nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cluster, err := pgcluster.Start(startCtx, pgcluster.Options{DataDir: dir, Fast: fast})
	if err != nil {
		os.RemoveAll(filepath.Dir(dir))
		return "", nil, err
	}
	stop := func() {
		_ = cluster.Stop()
		os.RemoveAll(filepath.Dir(dir))
	}
	if err := cluster.CreateDatabase(ctx, "sendonce"); err != nil {
		stop()
		return "", nil, err
	}
	fmt.Fprintf(stderr, "throwaway PostgreSQL on 127.0.0.1:%d (%s)\n", cluster.Port, dir)
	return cluster.URL("sendonce"), stop, nil
}

// startSink runs `sendonce sink smtp` as a child process and returns its address
// and a function that stops it.
func startSink(ctx context.Context, latency time.Duration) (string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.CommandContext(ctx, self, "sink", "smtp", "--addr", "127.0.0.1:0", "--latency", latency.String())
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		stop()
		return "", nil, fmt.Errorf("sink: no address line: %v", lines.Err())
	}
	// `sink smtp addr=HOST:PORT stats=URL`
	for _, field := range strings.Fields(lines.Text()) {
		if addr, ok := strings.CutPrefix(field, "addr="); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return addr, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("sink: unexpected first line %q", lines.Text())
}
