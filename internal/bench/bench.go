// Package bench measures the send path end to end (`sendonce bench`): a bulk
// import, the recipient build, one campaign through the real executor, and the bare
// claim and acknowledge statements in a tight loop as the ceiling the executor is
// held to (DESIGN.md §4).
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/store"
)

// Options are the knobs of one bench run; zero values take the defaults noted.
type Options struct {
	Recipients int // subscribers imported and sent to; default 100,000
	BatchSize  int // executor claim size; default 50 (SENDONCE_BATCH_SIZE's default)
	Workers    int // executor workers; default 32 (SENDONCE_WORKERS's default)
	// PrefetchNonIdempotent is SENDONCE_PREFETCH_NON_IDEMPOTENT: the bench's campaign
	// is under ambiguous_policy=skip, so over smtp it claims only for free workers
	// unless this is set.
	PrefetchNonIdempotent bool
	Latency               time.Duration // how long the fake provider takes to accept a message
	Provider              string        // instant (default) or smtp (go-mail to the SMTP server at SMTPAddr)
	// SMTPConns is the SMTP provider's connection pool (SENDONCE_SMTP_CONNS); workers
	// are capped at it, as serve caps them. 0: one per worker.
	SMTPConns int
	// RawConns is the number of connections of the raw loop. The executor claims on
	// one connection (its dispatcher) and acknowledges on another (its completer),
	// so the default is 2.
	RawConns int
	// AckInterval and AckBatch tune the executor's completer (0: its defaults).
	AckInterval time.Duration
	AckBatch    int
	// Links is the executor's unsubscribe-link function (nil: a fixed link); the
	// command passes the service's own so the bench signs links as `serve` does.
	Links func(accountID, campaignID, subscriberID int64) (httpsURL, mailto string)
	// Database describes the database in the header line (e.g. "throwaway cluster, fsync=off").
	Database string
	// SMTPAddr, with Provider smtp, is the running SMTP server to send to, one
	// offering neither STARTTLS nor AUTH (a sink out of this process: the product
	// carries none, and its CPU is not the app's). Required with smtp.
	SMTPAddr string
	// Executors, when above 1, adds the scaling curve: the send phase again with
	// 1, 2, 4, … up to Executors executors in this process, each with its own pool
	// and provider, on a fresh campaign to the same audience each time.
	Executors int
	// SequenceSteps is the backlog of due sequence steps one executor claims and
	// sends (sendSequence); 0 means min(Recipients, 20,000), negative skips it.
	SequenceSteps int

	// What `bench --grow` (grow.go) changes in a send: the campaigns' lists (nil:
	// every confirmed subscriber), the executors' SendRetention and Maintenance (0:
	// none, and the executor's default), and hooks run while the executors run.
	listIDs       []int64
	sendRetention time.Duration
	maintenance   time.Duration
	hooks         *sendHooks
}

// sendHooks run inside sendCampaign while its executors run: sending once the
// campaign is sending, sent after its last acknowledgement (before the executors stop).
type sendHooks struct {
	sending func(regs []*prometheus.Registry)
	sent    func(ctx context.Context, regs []*prometheus.Registry) error
}

func (o *Options) defaults() error {
	if o.Recipients <= 0 {
		o.Recipients = 100_000
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 50
	}
	if o.Workers <= 0 {
		o.Workers = 32
	}
	if o.RawConns <= 0 {
		o.RawConns = 2
	}
	if o.Executors <= 0 {
		o.Executors = 1
	}
	switch o.Provider {
	case "":
		o.Provider = "instant"
	case "instant", "smtp":
	default:
		return fmt.Errorf("bench: --provider must be instant or smtp, not %q", o.Provider)
	}
	if o.Provider == "smtp" && o.SMTPAddr == "" {
		return errors.New("bench: --provider smtp needs --sink HOST:PORT, an SMTP server offering neither STARTTLS nor AUTH " +
			"(`sendonce-harness sink smtp` is one; `make bench` starts it)")
	}
	switch {
	case o.SMTPConns < 0:
		return fmt.Errorf("bench: --smtp-conns must not be negative, not %d", o.SMTPConns)
	case o.SMTPConns > 0 && o.Provider != "smtp":
		return fmt.Errorf("bench: --smtp-conns needs --provider smtp")
	case o.SMTPConns > 0:
		// serve caps the workers at the SMTP connections (a worker waiting for a
		// connection holds a leased row): the bench runs what serve would run.
		o.Workers = min(o.Workers, o.SMTPConns)
	case o.Provider == "smtp":
		o.SMTPConns = o.Workers
	}
	return nil
}

// Report is what one run measured.
type Report struct {
	Import Rate
	Build  Rate
	Send   Send
	Raw    Rate
	// RawCost is the raw loop's own pool's cost: PostgreSQL's CPU for the two
	// statements alone.
	RawCost Cost
	// Curve is the send phase with 1, 2, 4, … executors (only with Executors > 1).
	Curve []Send
	// SequenceAdvanced and SequenceSent are the due sequence steps one executor
	// advanced and sent (sendSequence).
	SequenceAdvanced, SequenceSent Rate
}

// Rate is rows done in a duration.
type Rate struct {
	Rows int64
	Secs float64
}

// PerSecond is rows per second (0 for an empty run).
func (r Rate) PerSecond() float64 {
	if r.Secs <= 0 {
		return 0
	}
	return float64(r.Rows) / r.Secs
}

// Send is the executor's part: throughput, how long an accepted message waited for
// its acknowledgement, and the peak resident memory of the process while sending.
type Send struct {
	Rate
	AckP50, AckP99 time.Duration
	PeakRSSMB      float64
	// Busy is the fraction of the send's wall time its connections (SMTP
	// connections, or workers with the instant provider) spent inside the provider
	// call: the provider's summed call time ÷ (connections × Secs).
	Busy float64
	// Cost is the CPU and statements the send took.
	Cost Cost
	// Executor summarises the executor's claim and acknowledge histograms.
	Executor string
	// WALStart and WALEnd are the cluster's WAL insert positions around the send,
	// WALBytes the WAL between them (autovacuum's included): with pg_walinspect
	// the positions break it down by record type and relation.
	WALStart, WALEnd string
	WALBytes         int64
	// CampaignID is the campaign sent.
	CampaignID int64
}

// Run executes the whole bench on pool, which must point at a migrated, otherwise
// unused database, and prints one line per figure to out.
func Run(ctx context.Context, pool *pgxpool.Pool, o Options, out io.Writer) (Report, error) {
	if err := o.defaults(); err != nil {
		return Report{}, err
	}
	fmt.Fprintf(out, "# bench: recipients=%d batch_size=%d workers=%d latency=%s provider=%s smtp_conns=%d prefetch_non_idempotent=%v raw_conns=%d executors=%d database=%q\n",
		o.Recipients, o.BatchSize, o.Workers, o.Latency, o.Provider, o.SMTPConns, o.PrefetchNonIdempotent, o.RawConns, o.Executors, o.Database)
	var rep Report
	accountID, _, imported, err := Seed(ctx, pool, o.Recipients)
	if err != nil {
		return rep, err
	}
	rep.Import = imported
	fmt.Fprintf(out, "import: rows=%d secs=%.2f rows_per_s=%.0f\n", rep.Import.Rows, rep.Import.Secs, rep.Import.PerSecond())
	if err := analyze(ctx, pool); err != nil {
		return rep, err
	}

	rep.Build, rep.Send, err = sendCampaign(ctx, pool, accountID, o, 1)
	if err != nil {
		return rep, fmt.Errorf("send: %w", err)
	}
	fmt.Fprintf(out, "build: recipients=%d secs=%.2f rows_per_s=%.0f\n", rep.Build.Rows, rep.Build.Secs, rep.Build.PerSecond())
	fmt.Fprintf(out, "send: recipients=%d secs=%.2f per_s=%.0f busy=%.2f ack_p50_ms=%.1f ack_p99_ms=%.1f peak_rss_mb=%.1f\n",
		rep.Send.Rows, rep.Send.Secs, rep.Send.PerSecond(), rep.Send.Busy, ms(rep.Send.AckP50), ms(rep.Send.AckP99), rep.Send.PeakRSSMB)
	fmt.Fprintln(out, rep.Send.Executor)
	fmt.Fprintln(out, rep.Send.Cost.Line())
	fmt.Fprintln(out, rep.Send.Cost.Detail())
	if rep.Send.Rows > 0 {
		fmt.Fprintf(out, "# wal: bytes_per_msg=%.0f start_lsn=%s end_lsn=%s\n",
			float64(rep.Send.WALBytes)/float64(rep.Send.Rows), rep.Send.WALStart, rep.Send.WALEnd)
	}
	if err := analyze(ctx, pool); err != nil {
		return rep, err
	}

	raw, rawCost, _, err := rawLoop(ctx, pool, accountID, o)
	if err != nil {
		return rep, fmt.Errorf("raw: %w", err)
	}
	rep.Raw, rep.RawCost = raw, rawCost
	ratio := 0.0
	if raw.PerSecond() > 0 {
		ratio = rep.Send.PerSecond() / raw.PerSecond()
	}
	fmt.Fprintf(out, "raw: per_s=%.0f ratio=%.2f pg_cpu_s_per_1k=%s\n", raw.PerSecond(), ratio, rawCost.pgPer1k())
	if o.SequenceSteps == 0 {
		o.SequenceSteps = min(o.Recipients, 20_000)
	}
	if o.SequenceSteps > 0 {
		adv, snt, err := sendSequence(ctx, pool, accountID, o, o.SequenceSteps)
		if err != nil {
			return rep, fmt.Errorf("sequences: %w", err)
		}
		rep.SequenceAdvanced, rep.SequenceSent = adv, snt
		fmt.Fprintf(out, "sequences: due_steps=%d advanced_secs=%.2f advanced_per_s=%.0f sent_secs=%.2f sent_per_s=%.0f\n",
			adv.Rows, adv.Secs, adv.PerSecond(), snt.Secs, snt.PerSecond())
	}
	if o.Executors > 1 {
		if rep.Curve, err = curve(ctx, pool, accountID, o, rep.Send, out); err != nil {
			return rep, fmt.Errorf("executors: %w", err)
		}
	}
	return rep, nil
}

// curve sends the campaign again with 2, 4, … executors (first is the 1-executor
// send already measured). Each point first deletes the previous point's send rows,
// so every point starts from a table of the same size.
func curve(ctx context.Context, pool *pgxpool.Pool, accountID int64, o Options, first Send, out io.Writer) ([]Send, error) {
	points := []Send{first}
	line := func(n int, s Send) {
		fmt.Fprintf(out, "executors: n=%d per_s=%.0f secs=%.2f %s\n", n, s.PerSecond(), s.Secs, s.Cost.Line()[len("cost: "):])
	}
	line(1, first)
	for n := 2; n <= o.Executors; n *= 2 {
		if err := store.New(pool).BenchDeleteCampaignSends(ctx, accountID); err != nil {
			return points, err
		}
		if err := analyze(ctx, pool); err != nil {
			return points, err
		}
		_, s, err := sendCampaign(ctx, pool, accountID, o, n)
		if err != nil {
			return points, err
		}
		points = append(points, s)
		line(n, s)
	}
	return points, store.New(pool).BenchDeleteCampaignSends(ctx, accountID)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// analyze refreshes statistics after bulk writes, as autovacuum would shortly, so
// each phase starts from the same planner knowledge whatever its order.
func analyze(ctx context.Context, pool *pgxpool.Pool) error {
	return store.New(pool).BenchVacuumAnalyze(ctx)
}
