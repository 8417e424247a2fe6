package bench

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
)

// TestGrowPrintsEveryFigure runs `bench --grow` at a tiny scale on two databases:
// every figure line is printed, each round on each database sends to every
// recipient, the prefill holds what was asked and stays in the settled database
// alone, and the retention deletes every prefilled row beside a send. Timings are
// printed, never asserted.
func TestGrowPrintsEveryFigure(t *testing.T) {
	t.Parallel()
	empty, settled := dbtest.New(t), dbtest.New(t)
	var out bytes.Buffer
	rep, err := RunGrow(context.Background(), empty, settled, Options{Recipients: 500, BatchSize: 50, Workers: 50},
		GrowOptions{Subscribers: 1000, Settled: 2000, Rounds: 2, Maintenance: 100 * time.Millisecond, RetentionTimeout: 2 * time.Minute}, &out)
	require.NoError(t, err, out.String())
	t.Log(out.String())
	require.EqualValues(t, 1000, rep.Import.Rows)
	require.EqualValues(t, 1000, rep.ImportSettled.Rows)
	require.Len(t, rep.Empty, 2)
	require.Len(t, rep.Settled, 2)
	for _, p := range append(slices.Clone(rep.Empty), rep.Settled...) {
		require.EqualValues(t, 500, p.Build.Rows)
		require.EqualValues(t, 500, p.Send.Rows)
		require.EqualValues(t, 500, p.Raw.Rows)
	}
	require.Len(t, rep.Growth, 6)
	require.EqualValues(t, 2000, rep.Prefill.Rows)
	require.True(t, rep.RetentionComplete, out.String())
	require.EqualValues(t, 2000, rep.Retention.Rows)
	require.EqualValues(t, 500, rep.RetentionSend.Rows)
	// Before the pass: the prefilled rows alone (each round deleted its own); after
	// it: the retention send's; after the next send: both sends'.
	require.EqualValues(t, 2000, rep.SizeBefore.Rows)
	require.EqualValues(t, 500, rep.SizeAfter.Rows)
	require.EqualValues(t, 1000, rep.SizeNext.Rows)
	// The empty database's sends table stayed empty: each round deleted its rows.
	size, err := store.New(empty).BenchSendsSize(context.Background())
	require.NoError(t, err)
	require.Zero(t, size.Rows)
	text := out.String()
	for _, prefix := range []string{"# bench --grow: recipients=500 subscribers=1000 settled=2000 rounds=2 ", "import: rows=1000 ",
		"import_settled: rows=1000 ", "empty 1: build_secs=", "# empty 1 executor: claims=", "prefill: rows=2000 campaigns=2 ",
		"settled 1: build_secs=", "# settled 1 executor: claims=", "# growth 1: build_us_per_recipient=", "empty 2: build_secs=",
		"settled 2: build_secs=", "# growth 2: build_us_per_recipient=", "growth: build_us_per_recipient=",
		"retention: deleted_rows=2000 complete=true ", "retention_send: per_s=", "sends_table: before_mb=", "# load: start=", "# load: end="} {
		require.Contains(t, text, prefix)
	}
	for _, field := range []string{" build_us_per_recipient=", " send_per_s=", " max_ack_gap_ms=", " app_cpu_s_per_1k=",
		" pg_cpu_s_per_1k=", " claim_ack_pg_cpu_s_per_1k=", " raw_per_s=", " peak_rss_mb=", " raw_peak_rss_mb=",
		" claim_ack_pg_cpu_per_1k=", " send_slowdown=", " peak_rss=", " over_1.2x=", " rounds=2\n", " deleted_during_send=",
		" slowdown_vs_settled=", " settled_max_ack_gap_ms=", " after_retention_mb=", " after_next_send_mb="} {
		require.Contains(t, text, field)
	}
	require.Len(t, strings.Split(strings.TrimSpace(text), "\n"), 20)
}

// TestMedianGrowth: the growth figures are the medians of each pair of rounds'
// ratios, and a round that measured nothing does not count.
func TestMedianGrowth(t *testing.T) {
	t.Parallel()
	phase := func(rate float64) GrowPhase {
		return GrowPhase{Send: Send{Rate: Rate{Rows: int64(rate), Secs: 1}}}
	}
	var pairs [][]GrowthFigure
	for i, e := range []float64{100, 100, 100, 0} {
		pairs = append(pairs, growthFigures(phase(e), phase([]float64{50, 100, 80, 10}[i])))
	}
	got := medianGrowth(pairs)
	for _, f := range got {
		if f.Name == "send_slowdown" {
			require.InDelta(t, 1.25, f.Ratio, 1e-9) // 2, 1, 1.25: the empty 0 round does not count
		}
	}
	require.Equal(t, " build_us_per_recipient=n/a send_slowdown=1.25x over_1.2x=send_slowdown",
		formatGrowth([]GrowthFigure{{Name: "build_us_per_recipient"}, {Name: "send_slowdown", Ratio: 1.25}}))
}

// TestParseGrow: --grow defaults to a 1,000,000-recipient campaign, 2,000,000 subscribers and 20,000,000 settled rows unless told otherwise.
func TestParseGrow(t *testing.T) {
	t.Parallel()
	f, err := Parse(config.Config{}, []string{"--grow"})
	require.NoError(t, err)
	require.True(t, f.Grow)
	require.Equal(t, 1_000_000, f.Recipients)
	require.EqualValues(t, 20_000_000, f.Growth.Settled)
	g := f.Growth
	require.NoError(t, g.defaults(f.Recipients))
	require.Equal(t, 2_000_000, g.Subscribers)

	f, err = Parse(config.Config{}, []string{"--grow", "--recipients", "500", "--settled", "2000", "--subscribers", "1000"})
	require.NoError(t, err)
	require.Equal(t, 500, f.Recipients)
	require.EqualValues(t, 2000, f.Growth.Settled)
	require.Equal(t, 1000, f.Growth.Subscribers)
	g = GrowOptions{Subscribers: 10}
	require.Error(t, g.defaults(500), "fewer subscribers than recipients")

	// Without --grow the send bench keeps its own default.
	f, err = Parse(config.Config{}, nil)
	require.NoError(t, err)
	require.Equal(t, 100_000, f.Recipients)
}
