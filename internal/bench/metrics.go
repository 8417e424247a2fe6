package bench

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// executorSummary condenses the executors' own histograms (summed over regs) into one comment line:
// how many claim and acknowledge statements ran, their mean latency and mean rows,
// which is where a tuning session starts.
func executorSummary(regs ...*prometheus.Registry) string {
	stat := map[string][2]float64{}
	for _, reg := range regs {
		families, err := reg.Gather()
		if err != nil {
			return "# executor: " + err.Error()
		}
		for _, f := range families {
			for _, m := range f.GetMetric() {
				if h := m.GetHistogram(); h != nil {
					s := stat[f.GetName()]
					stat[f.GetName()] = [2]float64{s[0] + float64(h.GetSampleCount()), s[1] + h.GetSampleSum()}
				}
			}
		}
	}
	mean := func(name string, scale float64) float64 {
		s := stat[name]
		if s[0] == 0 {
			return 0
		}
		return s[1] / s[0] * scale
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# executor: claims=%.0f claim_mean_ms=%.2f claim_mean_rows=%.1f",
		stat["sendonce_claim_seconds"][0], mean("sendonce_claim_seconds", 1000), mean("sendonce_claim_batch_size", 1))
	fmt.Fprintf(&b, " acks=%.0f ack_mean_ms=%.2f ack_mean_rows=%.1f provider_mean_ms=%.2f",
		stat["sendonce_ack_seconds"][0], mean("sendonce_ack_seconds", 1000), mean("sendonce_ack_batch_size", 1),
		mean("sendonce_provider_seconds", 1000))
	return b.String()
}

// metricSum is the sum over regs of one counter's values, or with histogram of one
// histogram's observations (0 when absent).
func metricSum(name string, histogram bool, regs ...*prometheus.Registry) float64 {
	sum := 0.0
	for _, reg := range regs {
		families, err := reg.Gather()
		if err != nil {
			continue
		}
		for _, f := range families {
			if f.GetName() != name {
				continue
			}
			for _, m := range f.GetMetric() {
				if histogram {
					sum += m.GetHistogram().GetSampleSum()
				} else {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// busy is the fraction of secs that conns connections per executor, over n
// executors, spent inside the provider call (sendonce_provider_seconds).
func busy(conns, n int, secs float64, regs ...*prometheus.Registry) float64 {
	if conns <= 0 || n <= 0 || secs <= 0 {
		return 0
	}
	return metricSum("sendonce_provider_seconds", true, regs...) / (float64(conns*n) * secs)
}
