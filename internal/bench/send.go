package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/store"
)

// executorConns is each executor's pool size: serve's SENDONCE_EXECUTOR_DB_CONNS default.
const executorConns = 8

// sendCampaign runs one campaign through n real executors in this process, each
// with its own pool (as n `serve` replicas would have) and its own provider: it
// approves the campaign (the NOTIFY wakes the schedulers), times the start (the
// move to building, the windowed recipient build, the move to sending) until the
// campaign is sending, then the send until its last acknowledgement (the finalizer
// marks it sent shortly after).
// Peak memory is the process's high-water mark over the send alone; the cost
// window runs from `sending` to `sent`.
func sendCampaign(ctx context.Context, pool *pgxpool.Pool, accountID int64, o Options, n int) (build Rate, send Send, err error) {
	id, err := newCampaign(ctx, pool, accountID, fmt.Sprintf("bench send (%d executors)", n), o.listIDs)
	if err != nil {
		return build, send, err
	}
	m := newMeter(pool.Config())
	acks := newAckSampler(o.Recipients)
	regs := make([]*prometheus.Registry, n)
	for i := range n {
		ecfg := pool.Config()
		ecfg.MaxConns = executorConns
		m.instrument(ecfg)
		epool, err := pgxpool.NewWithConfig(ctx, ecfg)
		if err != nil {
			return build, send, err
		}
		defer epool.Close()
		p, closeProvider, err := newProvider(o, acks)
		if err != nil {
			return build, send, err
		}
		defer closeProvider()
		regs[i] = prometheus.NewRegistry()
		ex, err := executor.New(epool, p, executor.Config{
			Workers: o.Workers, BatchSize: o.BatchSize, AckInterval: o.AckInterval, AckBatch: o.AckBatch,
			PrefetchNonIdempotent: o.PrefetchNonIdempotent,
			// The NOTIFY starts the campaign; the tick is only the fallback.
			Tick: time.Minute, Links: o.Links,
			SendRetention: o.sendRetention, Maintenance: o.maintenance,
		}, nil, regs[i])
		if err != nil {
			return build, send, err
		}
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		_ = ex.Start(runCtx) // the executor's Start never fails
		defer func() {
			if stopErr := ex.Stop(context.WithoutCancel(ctx)); err == nil {
				err = stopErr
			}
		}()
	}
	resetPeakRSS()

	campaigns := campaign.NewService(pool)
	began := time.Now()
	if _, err := campaigns.Approve(ctx, accountID, id, nil); err != nil {
		return build, send, err
	}
	if _, err := waitStatus(ctx, store.New(pool), accountID, id, campaign.StatusApproved, time.Millisecond); err != nil {
		return build, send, err
	}
	// The build runs while the campaign is building; it is started once sending.
	started, err := waitStatus(ctx, store.New(pool), accountID, id, campaign.StatusBuilding, time.Millisecond)
	if err != nil {
		return build, send, err
	}
	w := m.open()
	q := store.New(pool)
	walStart, err := q.BenchWALInsertLSN(ctx)
	if err != nil {
		return build, send, err
	}
	build.Secs = started.Sub(began).Seconds()
	if o.hooks != nil && o.hooks.sending != nil {
		o.hooks.sending(regs)
	}
	if _, err := waitStatus(ctx, store.New(pool), accountID, id, campaign.StatusSending, 5*time.Millisecond); err != nil {
		return build, send, err
	}
	finished := time.Now()
	send.Cost = m.close(w, 0)
	send.PeakRSSMB = peakRSSMB()
	if send.WALEnd, err = q.BenchWALInsertLSN(ctx); err != nil {
		return build, send, err
	}
	send.WALStart = walStart
	if send.WALBytes, err = q.BenchWALBytes(ctx, store.BenchWALBytesParams{StartLsn: walStart, EndLsn: send.WALEnd}); err != nil {
		return build, send, err
	}
	last, err := store.New(pool).BenchLastSentAt(ctx, id)
	if err != nil {
		return build, send, err
	}
	// The drain ends with the last acknowledgement; the finalizer may notice up to
	// its poll interval later, which is reported apart.
	send.Secs = last.Sub(started).Seconds()
	conns := o.Workers
	if o.Provider == "smtp" {
		conns = o.SMTPConns
	}
	send.Busy = busy(conns, n, send.Secs, regs...)
	send.Executor = fmt.Sprintf("%s finish_lag_ms=%.0f", executorSummary(regs...), ms(finished.Sub(last)))

	st, err := campaigns.Stats(ctx, accountID, id)
	if err != nil {
		return build, send, err
	}
	if st.Status != campaign.StatusSent || st.Counts["sent"] != st.Total {
		return build, send, fmt.Errorf("campaign ended %s with %v", st.Status, st.Counts)
	}
	build.Rows, send.Rows = st.Total, st.Counts["sent"]
	send.Cost.Messages = send.Rows
	send.CampaignID = id
	if send.AckP50, send.AckP99, err = acks.latencies(ctx, pool, id); err != nil {
		return build, send, err
	}
	if o.hooks != nil && o.hooks.sent != nil {
		err = o.hooks.sent(ctx, regs)
	}
	return build, send, err
}

// waitStatus polls until the campaign leaves status `from` and returns when it
// saw that. Each poll is one primary-key read of the status (in the bench's own
// process, whose CPU is counted as the app's: the campaign service's Get, two
// statements with its attachments' metadata, took 0.22 s of a 3.36 s CPU profile
// of `bench --recipients 40000 --provider smtp`).
func waitStatus(ctx context.Context, q *store.Queries, accountID, id int64, from string, every time.Duration) (time.Time, error) {
	for {
		status, err := q.BenchCampaignStatus(ctx, store.BenchCampaignStatusParams{AccountID: accountID, ID: id})
		if err != nil {
			return time.Time{}, err
		}
		if status != from {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(every):
		}
	}
}
