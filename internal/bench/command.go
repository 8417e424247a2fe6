package bench

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/pprof"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/postgres"
)

// LinksFunc makes the executor's unsubscribe-link function from the configuration,
// as `serve` does (the command passes its own, so the bench signs links alike).
type LinksFunc func(cfg config.Config) (func(accountID, campaignID, subscriberID int64) (string, string), error)

// Flags are the command line of `sendonce bench`: the run's Options and what the
// command does around the run.
type Flags struct {
	Options
	Durable    bool   // throwaway cluster with stock durability
	CPUProfile string // file for a CPU profile of the whole run
	ExportRows int    // above 0: only the export bench, on this many subscribers
	Events     int    // above 0: only the events readers bench, with this many events per account
	Blocks     bool   // only the blocks render bench (no database)
	// Grow runs `bench --grow` (RunGrow) sized by Growth instead of the send bench.
	Grow   bool
	Growth GrowOptions
}

// Parse reads the flags of `sendonce bench` (cfg gives the executor's defaults).
// `sendonce-harness bench` parses them too, to start the SMTP sink --provider smtp
// needs when no --sink is given.
func Parse(cfg config.Config, args []string) (Flags, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var f Flags
	o := &f.Options
	fs.IntVar(&o.Recipients, "recipients", 100_000, "subscribers imported and sent to")
	fs.IntVar(&o.BatchSize, "batch-size", cfg.BatchSize, "executor claim size (default SENDONCE_BATCH_SIZE)")
	fs.IntVar(&o.Workers, "workers", cfg.Workers, "executor workers (default SENDONCE_WORKERS)")
	fs.BoolVar(&o.PrefetchNonIdempotent, "prefetch-non-idempotent", cfg.PrefetchNonIdempotent, "with --provider smtp: keep two batches claimed ahead of the workers (default SENDONCE_PREFETCH_NON_IDEMPOTENT; off, claims follow free workers)")
	fs.DurationVar(&o.Latency, "latency", 0, "how long the fake provider takes to accept each message, e.g. 5ms")
	fs.StringVar(&o.Provider, "provider", "instant", "instant, or smtp: go-mail to the SMTP server at --sink")
	fs.IntVar(&o.SMTPConns, "smtp-conns", 0, "with --provider smtp: pooled SMTP connections (SENDONCE_SMTP_CONNS); workers are capped at it as serve caps them (0: as many as workers)")
	fs.IntVar(&o.RawConns, "raw-conns", 2, "connections of the raw claim/ack loop (the executor claims on one and acknowledges on another)")
	fs.DurationVar(&o.AckInterval, "ack-interval", 0, "executor: longest wait before acknowledging (0: its default)")
	fs.IntVar(&o.AckBatch, "ack-batch", 0, "executor: most rows per acknowledgement (0: its default)")
	fs.IntVar(&o.Executors, "executors", 1, "above 1: also print the throughput curve for 1, 2, 4, … up to N executors on one database")
	fs.IntVar(&o.SequenceSteps, "sequence-steps", 0, "due sequence steps one executor claims and sends (0: min(recipients, 20000); -1: skip)")
	fs.StringVar(&o.SMTPAddr, "sink", "", "with --provider smtp: HOST:PORT of the SMTP server to send to, one offering neither STARTTLS nor AUTH "+
		"(`sendonce-harness sink smtp` prints one; `make bench` starts one beside the bench)")
	fs.BoolVar(&f.Durable, "durable", false, "throwaway cluster with stock durability (default: fsync=off, synchronous_commit=off)")
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.IntVar(&f.ExportRows, "export", 0, "only measure the streamed export: import this many subscribers, export them as CSV and NDJSON (rows/s, peak RSS)")
	fs.IntVar(&f.Events, "events", 0, "only measure the readers of events: two accounts with this many events each, written an acknowledgement's batch per transaction, then each reader timed at the start, middle and end (median ms), and the retention of them all")
	fs.BoolVar(&f.Blocks, "blocks", false, "only measure the per-message render of a 50-block design against the same content as hand-typed HTML, --recipients messages each in 10 alternating rounds (no database)")
	fs.BoolVar(&f.Grow, "grow", false, "only measure the cost as the tables grow: import, build, send and the raw claim/ack loop on an empty sends table and on "+
		"one with --settled rows prefilled (two databases of one cluster, --rounds rounds alternating), the median ratios, then a retention pass beside a send (default --recipients 1000000)")
	fs.IntVar(&f.Growth.Subscribers, "subscribers", 0, "with --grow: the account's subscribers, --recipients of them in the campaign's list (0: 2 × recipients)")
	fs.Int64Var(&f.Growth.Settled, "settled", 20_000_000, "with --grow: settled send rows of finished campaigns prefilled before the second round")
	fs.DurationVar(&f.Growth.Retention, "retention", 2160*time.Hour, "with --grow: SENDONCE_SEND_RETENTION of the retention pass (the prefilled campaigns finished a day longer ago)")
	fs.DurationVar(&f.Growth.Maintenance, "maintenance", time.Second, "with --grow: the executor's maintenance interval in the retention pass (serve's is min(SENDONCE_TICK, 5s))")
	fs.IntVar(&f.Growth.Rounds, "rounds", 3, "with --grow: how many times the phases run on each of the two databases, alternating empty and settled (the ratios are the medians)")
	fs.DurationVar(&f.Growth.RetentionTimeout, "retention-timeout", 30*time.Minute, "with --grow: how long to wait for the retention to delete every prefilled row")
	if err := fs.Parse(args); err != nil {
		return Flags{}, err
	}
	if f.Grow {
		set := map[string]bool{}
		fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
		if !set["recipients"] {
			o.Recipients = 1_000_000 // the scale --grow is for: a million-recipient campaign
		}
	}
	if o.SMTPAddr != "" {
		if _, _, err := net.SplitHostPort(o.SMTPAddr); err != nil {
			return Flags{}, fmt.Errorf("bench: --sink must be HOST:PORT, not %q", o.SMTPAddr)
		}
	}
	return f, nil
}

// Command is `sendonce bench`: import, build, send through the real executor and
// the raw claim/ack ceiling, on a throwaway cluster unless SENDONCE_DATABASE_URL is set.
// With --provider smtp it sends to the SMTP server at --sink: the product carries
// no sink, so the bench's own CPU stays the app's alone.
func Command(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer, unsubscribeLinks LinksFunc) error {
	f, err := Parse(cfg, args)
	if err != nil {
		return err
	}
	o := f.Options
	if f.CPUProfile != "" {
		f, err := os.Create(f.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if f.Blocks {
		return BlocksBench(o.Recipients, 10, stdout)
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
		u, stop, err := pgcluster.Throwaway(ctx, !f.Durable, stderr)
		if err != nil {
			return err
		}
		defer stop()
		url = u
		o.Database = "throwaway cluster, stock settings"
		if !f.Durable {
			o.Database = "throwaway cluster, fsync=off synchronous_commit=off full_page_writes=off"
		}
	}
	pool, err := openMigrated(ctx, url, max(cfg.DBMaxConns, int32(o.RawConns)+4))
	if err != nil {
		return err
	}
	defer pool.Close()
	if f.ExportRows > 0 {
		return ExportBench(ctx, pool, f.ExportRows, o.Database, stdout)
	}
	if f.Events > 0 {
		return EventsBench(ctx, pool, f.Events, o.Database, stdout)
	}
	if f.Grow {
		return growCommand(ctx, pool, url, cfg, o, f.Growth, stdout)
	}
	_, err = Run(ctx, pool, o, stdout)
	return err
}

// growCommand runs RunGrow on pool's database (the empty one) and a second
// database beside it on the same cluster (the settled one), created for the run
// and dropped after it.
func growCommand(ctx context.Context, pool *pgxpool.Pool, url string, cfg config.Config, o Options, g GrowOptions, stdout io.Writer) error {
	twinURL, drop, err := pgcluster.Twin(ctx, url, "_grow_settled")
	if err != nil {
		return fmt.Errorf("bench --grow: its second database: %w", err)
	}
	defer drop()
	settled, err := openMigrated(ctx, twinURL, max(cfg.DBMaxConns, int32(o.RawConns)+4))
	if err != nil {
		return err
	}
	defer settled.Close()
	_, err = RunGrow(ctx, pool, settled, o, g, stdout)
	return err
}

// openMigrated opens a pool of at most conns connections on url (waiting at most
// 30 s for the first) and migrates its database.
func openMigrated(ctx context.Context, url string, conns int32) (*pgxpool.Pool, error) {
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pool, err := postgres.Open(openCtx, url, conns)
	if err != nil {
		return nil, err
	}
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}
