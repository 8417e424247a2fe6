package event

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	deliveries *prometheus.CounterVec
	latency    prometheus.Histogram
	oldest     *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sendonce_event_deliveries_total",
			Help: "Event delivery attempts by outcome (delivered, retry, failed).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sendonce_event_delivery_seconds", Help: "Latency of event delivery attempts.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 15},
		}),
		oldest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sendonce_event_oldest_undelivered_seconds",
			Help: "Age of the oldest delivery not yet delivered, per endpoint.",
		}, []string{"endpoint"}),
	}
	reg.MustRegister(m.deliveries, m.latency, m.oldest)
	return m
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
