package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/postgres"
)

// LinksFunc makes the executor's unsubscribe-link function from the configuration,
// as `serve` does (the command passes its own, so the bench signs links alike).
type LinksFunc func(cfg config.Config) (func(accountID, campaignID, subscriberID int64) (string, string), error)

// Command is `sendonce bench`: import, build, send through the real executor and
// the raw claim/ack ceiling, on a throwaway cluster unless SENDONCE_DATABASE_URL is set.
func Command(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer, unsubscribeLinks LinksFunc) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o Options
	var durable bool
	fs.IntVar(&o.Recipients, "recipients", 100_000, "subscribers imported and sent to")
	fs.IntVar(&o.BatchSize, "batch-size", cfg.BatchSize, "executor claim size (default SENDONCE_BATCH_SIZE)")
	fs.IntVar(&o.Workers, "workers", cfg.Workers, "executor workers (default SENDONCE_WORKERS)")
	fs.BoolVar(&o.PrefetchNonIdempotent, "prefetch-non-idempotent", cfg.PrefetchNonIdempotent, "with --provider smtp: keep two batches claimed ahead of the workers (default SENDONCE_PREFETCH_NON_IDEMPOTENT; off, claims follow free workers)")
	fs.DurationVar(&o.Latency, "latency", 0, "how long the fake provider takes to accept each message, e.g. 5ms")
	fs.StringVar(&o.Provider, "provider", "instant", "instant, or smtp: go-mail to an in-process SMTP sink on loopback")
	fs.IntVar(&o.SMTPConns, "smtp-conns", 0, "with --provider smtp: pooled SMTP connections (SENDONCE_SMTP_CONNS); workers are capped at it as serve caps them (0: as many as workers)")
	fs.IntVar(&o.RawConns, "raw-conns", 2, "connections of the raw claim/ack loop (the executor claims on one and acknowledges on another)")
	fs.DurationVar(&o.AckInterval, "ack-interval", 0, "executor: longest wait before acknowledging (0: its default)")
	fs.IntVar(&o.AckBatch, "ack-batch", 0, "executor: most rows per acknowledgement (0: its default)")
	fs.IntVar(&o.Executors, "executors", 1, "above 1: also print the throughput curve for 1, 2, 4, … up to N executors on one database")
	fs.IntVar(&o.SequenceSteps, "sequence-steps", 0, "due sequence steps one executor claims and sends (0: min(recipients, 20000); -1: skip)")
	sinkWhere := fs.String("sink", "process", "with --provider smtp: process (a child `sendonce sink smtp`, so its CPU is not the app's), inprocess, or HOST:PORT of a running SMTP server (one offering neither STARTTLS nor AUTH, e.g. a sink behind a delaying proxy)")
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
		if _, _, err := net.SplitHostPort(*sinkWhere); err != nil {
			return fmt.Errorf("bench: --sink must be process, inprocess or HOST:PORT, not %q", *sinkWhere)
		}
		o.SMTPAddr = *sinkWhere
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
		u, stop, err := pgcluster.Throwaway(ctx, !durable, stderr)
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
	_, err = Run(ctx, pool, o, stdout)
	return err
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
