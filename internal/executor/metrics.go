package executor

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the executor's Prometheus series.
type metrics struct {
	sends           *prometheus.CounterVec
	claimSeconds    prometheus.Histogram
	claimBatch      prometheus.Histogram
	ackSeconds      prometheus.Histogram
	ackBatch        prometheus.Histogram
	providerSeconds prometheus.Histogram
	activeCampaigns prometheus.Gauge
	queuedRows      prometheus.Gauge
	retiredRows     prometheus.Counter
	poolSends       *prometheus.CounterVec
	poolFailovers   prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	batches := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}
	m := &metrics{
		sends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sendonce_sends_total",
			Help: "Recipient outcomes by status: sent, failed, suppressed, unknown, cancelled, retried (requeued), and released (handed back unsent: shutdown, or too little lease left).",
		}, []string{"status"}),
		claimSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sendonce_claim_seconds", Help: "Latency of one claim statement.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		claimBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sendonce_claim_batch_size", Help: "Rows returned by one claim.", Buckets: batches,
		}),
		ackSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sendonce_ack_seconds", Help: "Latency of one coalesced acknowledgement statement.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		ackBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sendonce_ack_batch_size", Help: "Rows acknowledged by one statement.", Buckets: batches,
		}),
		providerSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sendonce_provider_seconds", Help: "Latency of one provider call.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
		activeCampaigns: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sendonce_active_campaigns", Help: "Campaigns in status sending, as this executor last saw them.",
		}),
		queuedRows: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sendonce_queued_rows", Help: "Send rows waiting in status queued (all campaigns), counted once a minute.",
		}),
		retiredRows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sendonce_send_rows_deleted_total",
			Help: "Send rows of finished campaigns deleted past SENDONCE_SEND_RETENTION (their counts are kept).",
		}),
		poolSends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sendonce_pool_sends_total",
			Help: "Sends through sender pools by the member's position (0: the primary) and outcome (sent, refused: the route refused before accepting, failed: any other failure).",
		}, []string{"position", "outcome"}),
		poolFailovers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sendonce_pool_failovers_total",
			Help: "Rows a pool's sender refused before accepting, handed back uncharged for the pool's next sender.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.sends, m.claimSeconds, m.claimBatch, m.ackSeconds,
		m.ackBatch, m.providerSeconds, m.activeCampaigns, m.queuedRows, m.retiredRows, m.poolSends, m.poolFailovers} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
		}
	}
	return m, nil
}
