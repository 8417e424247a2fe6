package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// instant accepts every message, after latency when set (to imitate a network
// provider), and records when it accepted a sample of them.
type instant struct {
	latency time.Duration
	acks    *ackSampler
}

func (p *instant) Send(ctx context.Context, m provider.Message) (string, error) {
	if p.latency > 0 {
		t := time.NewTimer(p.latency)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", &provider.Error{Class: provider.Temporary, Err: ctx.Err()}
		case <-t.C:
		}
	}
	p.acks.accepted(m.JobID)
	return m.JobID, nil
}

func (p *instant) Idempotent() bool { return true }
func (p *instant) Close() error     { return nil }

// sampled wraps a real provider (the SMTP one) to record acceptance times.
type sampled struct {
	provider.Provider
	acks *ackSampler
}

func (p *sampled) Send(ctx context.Context, m provider.Message) (string, error) {
	id, err := p.Provider.Send(ctx, m)
	if err == nil {
		p.acks.accepted(m.JobID)
	}
	return id, err
}

// newProvider returns the provider the send phase uses and a function that stops
// whatever it started.
func newProvider(o Options, acks *ackSampler) (provider.Provider, func(), error) {
	if o.Provider != "smtp" {
		return &instant{latency: o.Latency, acks: acks}, func() {}, nil
	}
	addr := o.SMTPAddr // defaults() made sure there is one
	host, port, _ := strings.Cut(addr, ":")
	portN, _ := strconv.Atoi(port)
	p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: portN, Security: "none", Conns: max(o.SMTPConns, 1)})
	if err != nil {
		return nil, nil, err
	}
	return &sampled{Provider: p, acks: acks}, func() { p.Close() }, nil
}

// ackSampler remembers when the provider accepted about maxSamples evenly spread
// messages (job ids ending in a multiple of stride), so measuring acknowledgement
// latency costs the same memory at 100,000 and 1,000,000 recipients.
type ackSampler struct {
	stride int64
	mu     sync.Mutex
	at     map[string]time.Time
}

const maxSamples = 10_000

func newAckSampler(recipients int) *ackSampler {
	return &ackSampler{stride: max(1, int64(recipients/maxSamples)), at: make(map[string]time.Time, maxSamples+1)}
}

func (a *ackSampler) accepted(jobID string) {
	i := strings.LastIndexByte(jobID, ':')
	sub, err := strconv.ParseInt(jobID[i+1:], 10, 64)
	if err != nil || sub%a.stride != 0 {
		return
	}
	now := time.Now()
	a.mu.Lock()
	if len(a.at) <= maxSamples {
		a.at[jobID] = now
	}
	a.mu.Unlock()
}

// latencies returns the p50 and p99 of sent_at minus acceptance: how long an
// accepted message stayed unacknowledged, up to the start of the statement that
// acknowledged it (sent_at is that statement's now()). Both clocks are this host's.
func (a *ackSampler) latencies(ctx context.Context, pool *pgxpool.Pool, campaignID int64) (p50, p99 time.Duration, err error) {
	a.mu.Lock()
	ids := make([]string, 0, len(a.at))
	for id := range a.at {
		ids = append(ids, id)
	}
	a.mu.Unlock()
	rows, err := store.New(pool).BenchSentAt(ctx, store.BenchSentAtParams{CampaignID: campaignID, JobIds: ids})
	if err != nil {
		return 0, 0, err
	}
	if len(rows) == 0 {
		return 0, 0, fmt.Errorf("no acknowledged sample among %d", len(ids))
	}
	d := make([]time.Duration, 0, len(rows))
	for _, r := range rows {
		if r.SentAt != nil {
			d = append(d, max(0, r.SentAt.Sub(a.at[r.JobID])))
		}
	}
	slices.Sort(d)
	return quantile(d, 0.50), quantile(d, 0.99), nil
}

// quantile of sorted values by nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
