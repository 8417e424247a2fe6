package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/store"
)

// sendSequence measures one executor on a backlog of due sequence steps: n
// enrollments of a one-step sequence (send) all due now, as after an outage or a
// large import into a list-triggered welcome series. advanced is how fast the
// advancer claimed and evaluated them (each queues its step's send row), sent how
// fast those sends went out through the campaign path and were acknowledged, both
// timed from the executor's start.
func sendSequence(ctx context.Context, pool *pgxpool.Pool, accountID int64, o Options, n int) (advanced, sent Rate, err error) {
	q := store.New(pool)
	tpl, err := q.BenchSequenceTemplate(ctx, accountID)
	if err != nil {
		return advanced, sent, err
	}
	svc := sequence.NewService(pool)
	seq, err := svc.Create(ctx, accountID, sequence.Definition{Name: "bench sequence",
		Trigger: sequence.Trigger{Type: sequence.TriggerManual},
		Steps:   []sequence.Step{{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "series@bench.example.com"}}})
	if err != nil {
		return advanced, sent, err
	}
	if _, err = svc.Transition(ctx, accountID, seq.ID, sequence.Activate); err != nil {
		return advanced, sent, err
	}
	enrolled, err := q.BenchSequenceEnroll(ctx, store.BenchSequenceEnrollParams{SequenceID: seq.ID, AccountID: accountID, N: int32(n)})
	if err != nil {
		return advanced, sent, err
	}
	if err := analyze(ctx, pool); err != nil {
		return advanced, sent, err
	}
	ecfg := pool.Config()
	ecfg.MaxConns = executorConns
	epool, err := pgxpool.NewWithConfig(ctx, ecfg)
	if err != nil {
		return advanced, sent, err
	}
	defer epool.Close()
	p, closeProvider, err := newProvider(o, newAckSampler(n))
	if err != nil {
		return advanced, sent, err
	}
	defer closeProvider()
	ex, err := executor.New(epool, p, executor.Config{Workers: o.Workers, BatchSize: o.BatchSize,
		AckInterval: o.AckInterval, AckBatch: o.AckBatch, Tick: time.Minute, Links: o.Links,
		Sequences: &sequence.Advancer{Pool: epool}}, nil, nil)
	if err != nil {
		return advanced, sent, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	began := time.Now()
	_ = ex.Start(runCtx) // the executor's Start never fails
	defer func() {
		if stopErr := ex.Stop(context.WithoutCancel(ctx)); err == nil {
			err = stopErr
		}
	}()
	var advancedAt time.Time
	for {
		pr, err := q.BenchSequenceProgress(ctx, seq.ID)
		if err != nil {
			return advanced, sent, err
		}
		if advancedAt.IsZero() && pr.Advanced >= enrolled {
			advancedAt = time.Now()
		}
		if pr.Sent >= enrolled {
			advanced = Rate{Rows: enrolled, Secs: advancedAt.Sub(began).Seconds()}
			sent = Rate{Rows: pr.Sent, Secs: pr.LastSentAt.Sub(began).Seconds()}
			return advanced, sent, nil
		}
		if time.Since(began) > 30*time.Minute {
			return advanced, sent, fmt.Errorf("sequence bench: %d of %d sent after 30 minutes", pr.Sent, enrolled)
		}
		select {
		case <-ctx.Done():
			return advanced, sent, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
