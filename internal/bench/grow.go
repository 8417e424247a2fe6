package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/subscriber"
)

// GrowOptions size `sendonce bench --grow`: the cost of a campaign as the tables
// grow: a large, old account against a new one.
type GrowOptions struct {
	// Subscribers is the account's size; the campaign goes to Recipients of them
	// (a list). Default 2 × Recipients.
	Subscribers int
	// Settled is how many settled send rows (of finished campaigns past Retention)
	// are in the sends table for the second round of phases; default 20,000,000.
	Settled int64
	// Retention is the executors' SendRetention in the retention pass (the
	// prefilled campaigns finished a day longer ago); default 2160h.
	Retention time.Duration
	// Maintenance is the executor's maintenance interval in the retention pass
	// (each pass deletes for at most the product's one-second budget); default 1s,
	// what SENDONCE_TICK=1s gives serve.
	Maintenance time.Duration
	// RetentionTimeout bounds how long the bench waits for the retention to delete
	// every prefilled row; default 30m. A pass cut short is reported, not an error.
	RetentionTimeout time.Duration
	// Rounds is how many times the phases run on each database, alternating
	// empty and settled; default 3.
	Rounds int
}

func (g *GrowOptions) defaults(recipients int) error {
	if g.Subscribers <= 0 {
		g.Subscribers = 2 * recipients
	}
	if g.Subscribers < recipients {
		return fmt.Errorf("bench: --subscribers (%d) must be at least --recipients (%d)", g.Subscribers, recipients)
	}
	if g.Settled <= 0 {
		g.Settled = 20_000_000
	}
	if g.Retention <= 0 {
		g.Retention = 2160 * time.Hour
	}
	if g.Maintenance <= 0 {
		g.Maintenance = time.Second
	}
	if g.RetentionTimeout <= 0 {
		g.RetentionTimeout = 30 * time.Minute
	}
	if g.Rounds <= 0 {
		g.Rounds = 3
	}
	return nil
}

// GrowPhase is one round of the measured phases on a sends table of one size.
type GrowPhase struct {
	Build Rate
	Send  Send
	// MaxAckGap is the longest wait between two successive acknowledgements of the send.
	MaxAckGap time.Duration
	// Raw is the bare claim/ack loop on its own campaign to the same list, RawCost
	// its cost (PostgreSQL's CPU for the claim and acknowledge statements alone).
	Raw          Rate
	RawCost      Cost
	RawPeakRSSMB float64
}

// BuildMicros is the build's time per recipient in microseconds.
func (p GrowPhase) BuildMicros() float64 {
	if p.Build.Rows <= 0 {
		return 0
	}
	return p.Build.Secs / float64(p.Build.Rows) * 1e6
}

// GrowReport is what `bench --grow` measured.
type GrowReport struct {
	// Import is the import into the empty database's account, ImportSettled the
	// same rows into the settled database's.
	Import, ImportSettled Rate
	ImportPeakRSSMB       float64
	// Empty and Settled are the rounds of phases on the empty sends table and on
	// the one holding Settled rows, run alternately (Empty[0], Settled[0], Empty[1], …).
	Empty, Settled []GrowPhase
	// Growth is each figure's median over the rounds of settled ÷ empty.
	Growth  []GrowthFigure
	Prefill Rate
	// Retention is the pass: the rows the executors' retention deleted and how
	// long from their start until it had deleted every prefilled row (or gave up).
	Retention         Rate
	RetentionComplete bool
	// RetiredDuringSend is how many rows it deleted while the campaign was sending.
	RetiredDuringSend int64
	// RetentionSend is the send that ran beside it, MaxAckGap its longest wait.
	RetentionSend      Send
	RetentionMaxAckGap time.Duration
	// The sends table before the pass, after it (and a VACUUM), and after one more
	// send of Recipients rows into the space the pass freed.
	SizeBefore, SizeAfter, SizeNext store.BenchSendsSizeRow
}

// prefillBatch is the most settled rows one prefill statement inserts.
const prefillBatch = 200_000

// RunGrow is `sendonce bench --grow`: in each of two databases of one cluster,
// an account of g.Subscribers, Recipients of them in a list, imported through the
// product's import; g.Settled settled rows of finished campaigns prefilled into
// the second's sends table; then the same phases (recipient build, send through
// the real executor, the raw claim/ack loop) g.Rounds times on each, alternating
// empty and settled so that a change in the machine's load falls on both, and
// each figure's median ratio; then a retention pass of the product's executor
// (SENDONCE_SEND_RETENTION) beside a send on the settled database, with the
// table's size before and after.
func RunGrow(ctx context.Context, empty, settled *pgxpool.Pool, o Options, g GrowOptions, out io.Writer) (GrowReport, error) {
	var rep GrowReport
	if err := o.defaults(); err != nil {
		return rep, err
	}
	if err := g.defaults(o.Recipients); err != nil {
		return rep, err
	}
	fmt.Fprintf(out, "# bench --grow: recipients=%d subscribers=%d settled=%d rounds=%d retention=%s maintenance=%s batch_size=%d workers=%d provider=%s database=%q\n",
		o.Recipients, g.Subscribers, g.Settled, g.Rounds, g.Retention, g.Maintenance, o.BatchSize, o.Workers, o.Provider, o.Database)
	// The machine's load around the run: on a shared machine the rounds' ratios
	// are only as good as the load was steady between them.
	fmt.Fprintf(out, "# load: start=%s\n", loadAverage())
	defer func() { fmt.Fprintf(out, "# load: end=%s\n", loadAverage()) }()

	resetPeakRSS()
	emptyAcc, eo, err := growAccount(ctx, empty, o, g, &rep.Import)
	if err != nil {
		return rep, err
	}
	rep.ImportPeakRSSMB = peakRSSMB()
	fmt.Fprintf(out, "import: rows=%d secs=%.2f rows_per_s=%.0f peak_rss_mb=%.1f\n",
		rep.Import.Rows, rep.Import.Secs, rep.Import.PerSecond(), rep.ImportPeakRSSMB)
	settledAcc, so, err := growAccount(ctx, settled, o, g, &rep.ImportSettled)
	if err != nil {
		return rep, err
	}
	fmt.Fprintf(out, "import_settled: rows=%d secs=%.2f rows_per_s=%.0f\n",
		rep.ImportSettled.Rows, rep.ImportSettled.Secs, rep.ImportSettled.PerSecond())
	if rep.Prefill, err = prefill(ctx, settled, settledAcc, g, out); err != nil {
		return rep, fmt.Errorf("prefill: %w", err)
	}
	var pairs [][]GrowthFigure
	for round := 1; round <= g.Rounds; round++ {
		e, err := growPhase(ctx, empty, emptyAcc, eo, fmt.Sprintf("empty %d", round), out)
		if err != nil {
			return rep, fmt.Errorf("empty: %w", err)
		}
		s, err := growPhase(ctx, settled, settledAcc, so, fmt.Sprintf("settled %d", round), out)
		if err != nil {
			return rep, fmt.Errorf("settled: %w", err)
		}
		rep.Empty, rep.Settled = append(rep.Empty, e), append(rep.Settled, s)
		pairs = append(pairs, growthFigures(e, s))
		fmt.Fprintf(out, "# growth %d:%s\n", round, formatGrowth(pairs[len(pairs)-1]))
	}
	rep.Growth = medianGrowth(pairs)
	fmt.Fprintf(out, "growth:%s rounds=%d\n", formatGrowth(rep.Growth), g.Rounds)

	if err := retentionPass(ctx, settled, settledAcc, so, g, &rep, out); err != nil {
		return rep, fmt.Errorf("retention: %w", err)
	}
	return rep, nil
}

// growAccount creates the bench account on pool with g.Subscribers subscribers
// through the product's import (timed into imported), o.Recipients of them in a
// list, and returns the account and o sending to that list.
func growAccount(ctx context.Context, pool *pgxpool.Pool, o Options, g GrowOptions, imported *Rate) (int64, Options, error) {
	acc, _, err := account.NewService(pool).Create(ctx, fmt.Sprintf("bench-grow-%d", time.Now().UnixNano()))
	if err != nil {
		return 0, o, fmt.Errorf("create account: %w", err)
	}
	list, err := subscriber.NewService(pool).CreateList(ctx, acc.ID, "bench audience", "", subscriber.ListOptin{})
	if err != nil {
		return 0, o, fmt.Errorf("create list: %w", err)
	}
	o.listIDs = []int64{list.ID}
	inList, err := importSubscribers(ctx, pool, acc.ID, 0, o.Recipients, &list.ID)
	if err != nil {
		return 0, o, fmt.Errorf("import: %w", err)
	}
	rest, err := importSubscribers(ctx, pool, acc.ID, o.Recipients, g.Subscribers, nil)
	if err != nil {
		return 0, o, fmt.Errorf("import: %w", err)
	}
	*imported = Rate{Rows: inList.Rows + rest.Rows, Secs: inList.Secs + rest.Secs}
	return acc.ID, o, analyze(ctx, pool)
}

// growPhase measures one round: build and send a campaign to the list, then the
// raw loop on another; each campaign's rows are deleted after it (and the table
// vacuumed), so every round starts from the same table.
func growPhase(ctx context.Context, pool *pgxpool.Pool, accountID int64, o Options, label string, out io.Writer) (GrowPhase, error) {
	var p GrowPhase
	q := store.New(pool)
	var err error
	if p.Build, p.Send, err = sendCampaign(ctx, pool, accountID, o, 1); err != nil {
		return p, fmt.Errorf("send: %w", err)
	}
	if p.MaxAckGap, err = maxAckGap(ctx, q, p.Send.CampaignID); err != nil {
		return p, err
	}
	if err := dropCampaignSends(ctx, pool, p.Send.CampaignID); err != nil {
		return p, err
	}
	resetPeakRSS()
	raw, rawCost, rawID, err := rawLoop(ctx, pool, accountID, o)
	if err != nil {
		return p, fmt.Errorf("raw: %w", err)
	}
	p.Raw, p.RawCost, p.RawPeakRSSMB = raw, rawCost, peakRSSMB()
	if err := dropCampaignSends(ctx, pool, rawID); err != nil {
		return p, err
	}
	fmt.Fprintf(out, "%s: build_secs=%.2f build_us_per_recipient=%.2f send_per_s=%.0f send_secs=%.2f max_ack_gap_ms=%.0f app_cpu_s_per_1k=%.3f pg_cpu_s_per_1k=%s claim_ack_pg_cpu_s_per_1k=%s raw_per_s=%.0f peak_rss_mb=%.1f raw_peak_rss_mb=%.1f\n",
		label, p.Build.Secs, p.BuildMicros(), p.Send.PerSecond(), p.Send.Secs, ms(p.MaxAckGap),
		p.Send.Cost.per1k(p.Send.Cost.AppCPU), p.Send.Cost.pgPer1k(), p.RawCost.pgPer1k(), p.Raw.PerSecond(),
		p.Send.PeakRSSMB, p.RawPeakRSSMB)
	fmt.Fprintf(out, "# %s %s\n", label, strings.TrimPrefix(p.Send.Executor, "# "))
	return p, nil
}

// dropCampaignSends deletes one campaign's send rows and vacuums.
func dropCampaignSends(ctx context.Context, pool *pgxpool.Pool, campaignID int64) error {
	if err := store.New(pool).BenchDeleteSendsOfCampaign(ctx, campaignID); err != nil {
		return err
	}
	return analyze(ctx, pool)
}

func maxAckGap(ctx context.Context, q *store.Queries, campaignID int64) (time.Duration, error) {
	secs, err := q.BenchMaxAckGap(ctx, campaignID)
	return time.Duration(secs * float64(time.Second)), err
}

// prefill inserts g.Settled settled send rows into campaigns of the account that
// finished a day before g.Retention ago, each to every subscriber of the account
// (the last to fewer), prefillBatch rows a statement, then vacuums and analyzes.
func prefill(ctx context.Context, pool *pgxpool.Pool, accountID int64, g GrowOptions, out io.Writer) (Rate, error) {
	q := store.New(pool)
	var r Rate
	n := int((g.Settled + int64(g.Subscribers) - 1) / int64(g.Subscribers))
	began := time.Now()
	ids, err := q.BenchRetiredCampaignsInsert(ctx, store.BenchRetiredCampaignsInsertParams{
		AccountID: accountID, N: int32(n), Age: interval(g.Retention + 24*time.Hour)})
	if err != nil {
		return r, err
	}
	for _, id := range ids {
		var after int64
		for r.Rows < g.Settled {
			res, err := q.BenchSettledSendsInsert(ctx, store.BenchSettledSendsInsertParams{
				AccountID: accountID, CampaignID: id, AfterSubscriberID: after, N: min(prefillBatch, g.Settled-r.Rows)})
			if err != nil {
				return r, err
			}
			r.Rows += res.Rows
			if res.Rows == 0 {
				break // every subscriber has this campaign's row
			}
			after = res.LastSubscriberID
		}
	}
	r.Secs = time.Since(began).Seconds()
	vacuumed := time.Now()
	if err := analyze(ctx, pool); err != nil {
		return r, err
	}
	size, err := q.BenchSendsSize(ctx)
	if err != nil {
		return r, err
	}
	fmt.Fprintf(out, "prefill: rows=%d campaigns=%d secs=%.2f rows_per_s=%.0f vacuum_analyze_secs=%.2f table_mb=%.1f\n",
		r.Rows, len(ids), r.Secs, r.PerSecond(), time.Since(vacuumed).Seconds(), mb(size.Bytes))
	return r, nil
}

// GrowthFigure is one figure of the settled round over the empty one, so above
// 1 is worse (for the send rate, the empty rate over the settled one). Ratio is
// 0 when the empty round measured nothing.
type GrowthFigure struct {
	Name  string
	Ratio float64
}

// growthFigures compares a settled round with the empty one beside it.
func growthFigures(empty, settled GrowPhase) []GrowthFigure {
	pairs := []struct {
		name string
		e, s float64
	}{
		{"build_us_per_recipient", empty.BuildMicros(), settled.BuildMicros()},
		{"claim_ack_pg_cpu_per_1k", empty.RawCost.per1k(empty.RawCost.PGCPU), settled.RawCost.per1k(settled.RawCost.PGCPU)},
		{"send_pg_cpu_per_1k", empty.Send.Cost.per1k(empty.Send.Cost.PGCPU), settled.Send.Cost.per1k(settled.Send.Cost.PGCPU)},
		{"send_app_cpu_per_1k", empty.Send.Cost.per1k(empty.Send.Cost.AppCPU), settled.Send.Cost.per1k(settled.Send.Cost.AppCPU)},
		{"send_slowdown", settled.Send.PerSecond(), empty.Send.PerSecond()}, // empty rate ÷ settled rate
		{"peak_rss", empty.Send.PeakRSSMB, settled.Send.PeakRSSMB},
	}
	out := make([]GrowthFigure, len(pairs))
	for i, p := range pairs {
		out[i].Name = p.name
		if p.e > 0 && p.s >= 0 {
			out[i].Ratio = p.s / p.e
		}
	}
	return out
}

// medianGrowth is each figure's median ratio over the pairs of rounds (each
// pair's growthFigures), counting only the pairs that measured it.
func medianGrowth(pairs [][]GrowthFigure) []GrowthFigure {
	med := slices.Clone(pairs[0])
	for k := range med {
		var r []float64
		for _, figures := range pairs {
			if figures[k].Ratio > 0 {
				r = append(r, figures[k].Ratio)
			}
		}
		med[k].Ratio = 0
		if len(r) > 0 {
			med[k].Ratio = median(r)
		}
	}
	return med
}

// formatGrowth prints the figures and which exceed 1.2: the bound the send path
// is held to as the tables grow.
func formatGrowth(figures []GrowthFigure) string {
	var b strings.Builder
	var over []string
	for _, f := range figures {
		if f.Ratio <= 0 {
			fmt.Fprintf(&b, " %s=n/a", f.Name)
			continue
		}
		fmt.Fprintf(&b, " %s=%.2fx", f.Name, f.Ratio)
		if f.Ratio > 1.2 {
			over = append(over, f.Name)
		}
	}
	if len(over) == 0 {
		b.WriteString(" over_1.2x=none")
	} else {
		fmt.Fprintf(&b, " over_1.2x=%s", strings.Join(over, ","))
	}
	return b.String()
}

// retentionPass sends one more campaign through an executor whose maintenance
// runs the product's retention (SendRetention g.Retention, every g.Maintenance),
// waits until the retention has deleted every prefilled row (or g.RetentionTimeout),
// and prints the send's rate and longest acknowledgement gap beside the settled
// round's, the rows deleted, and the sends table's size before, after (and a
// VACUUM, as autovacuum would) and after one more send into the freed space.
func retentionPass(ctx context.Context, pool *pgxpool.Pool, accountID int64, o Options, g GrowOptions, rep *GrowReport, out io.Writer) error {
	q := store.New(pool)
	var err error
	if rep.SizeBefore, err = q.BenchSendsSize(ctx); err != nil {
		return err
	}
	const deleted = "sendonce_send_rows_deleted_total"
	var atSending float64
	ro := o
	ro.sendRetention, ro.maintenance = g.Retention, g.Maintenance
	began := time.Now()
	ro.hooks = &sendHooks{
		sending: func(regs []*prometheus.Registry) { atSending = metricSum(deleted, false, regs...) },
		sent: func(ctx context.Context, regs []*prometheus.Registry) error {
			rep.RetiredDuringSend = int64(metricSum(deleted, false, regs...) - atSending)
			deadline := began.Add(g.RetentionTimeout)
			for {
				n := metricSum(deleted, false, regs...)
				rep.Retention = Rate{Rows: int64(n), Secs: time.Since(began).Seconds()}
				if rep.RetentionComplete = rep.Retention.Rows >= g.Settled; rep.RetentionComplete || time.Now().After(deadline) {
					return nil
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
		},
	}
	if _, rep.RetentionSend, err = sendCampaign(ctx, pool, accountID, ro, 1); err != nil {
		return err
	}
	if rep.RetentionMaxAckGap, err = maxAckGap(ctx, q, rep.RetentionSend.CampaignID); err != nil {
		return err
	}
	if err := analyze(ctx, pool); err != nil {
		return err
	}
	if rep.SizeAfter, err = q.BenchSendsSize(ctx); err != nil {
		return err
	}
	if _, _, err := sendCampaign(ctx, pool, accountID, o, 1); err != nil {
		return err
	}
	if err := analyze(ctx, pool); err != nil {
		return err
	}
	if rep.SizeNext, err = q.BenchSendsSize(ctx); err != nil {
		return err
	}
	// Against the settled rounds' medians.
	var rates, gaps []float64
	for _, p := range rep.Settled {
		rates, gaps = append(rates, p.Send.PerSecond()), append(gaps, float64(p.MaxAckGap))
	}
	settledGap := time.Duration(median(gaps))
	slowdown := 0.0
	if rep.RetentionSend.PerSecond() > 0 {
		slowdown = median(rates) / rep.RetentionSend.PerSecond()
	}
	fmt.Fprintf(out, "retention: deleted_rows=%d complete=%v secs=%.2f rows_per_s=%.0f deleted_during_send=%d\n",
		rep.Retention.Rows, rep.RetentionComplete, rep.Retention.Secs, rep.Retention.PerSecond(), rep.RetiredDuringSend)
	fmt.Fprintf(out, "retention_send: per_s=%.0f secs=%.2f slowdown_vs_settled=%.2fx max_ack_gap_ms=%.0f settled_max_ack_gap_ms=%.0f pg_cpu_s_per_1k=%s peak_rss_mb=%.1f\n",
		rep.RetentionSend.PerSecond(), rep.RetentionSend.Secs, slowdown, ms(rep.RetentionMaxAckGap), ms(settledGap),
		rep.RetentionSend.Cost.pgPer1k(), rep.RetentionSend.PeakRSSMB)
	fmt.Fprintf(out, "sends_table: before_mb=%.1f before_rows=%d after_retention_mb=%.1f after_retention_rows=%d after_next_send_mb=%.1f after_next_send_rows=%d\n",
		mb(rep.SizeBefore.Bytes), rep.SizeBefore.Rows, mb(rep.SizeAfter.Bytes), rep.SizeAfter.Rows, mb(rep.SizeNext.Bytes), rep.SizeNext.Rows)
	return nil
}

// loadAverage is the first three fields of /proc/loadavg ("n/a" when unreadable).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], ",")
	}
	return "n/a"
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }

func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}
