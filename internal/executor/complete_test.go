package executor

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
)

// ackGate holds every acknowledgement statement until open is closed, counting them.
type ackGate struct {
	open    chan struct{}
	started atomic.Int64
}

func (g *ackGate) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "-- name: SendAckMany") {
		g.started.Add(1)
		<-g.open
	}
	return ctx
}

func (g *ackGate) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart holds the acknowledgement, which goes in one batch with its plan
// setting (SendPlanIndexed), before the batch is sent.
func (g *ackGate) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	for _, q := range d.Batch.QueuedQueries {
		if strings.Contains(q.SQL, "-- name: SendAckMany") {
			g.started.Add(1)
			<-g.open
		}
	}
	return ctx
}

func (g *ackGate) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (g *ackGate) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestAcksGrowWhileTheAckerIsBusy: while the acknowledgement under way waits for
// the database (a slow commit), the results that come in meanwhile join one batch
// instead of queueing behind it, so the workers are not held up by acknowledgement
// latency. Before the completer coalesced, each of these 14 results (nothing else
// in flight) took a statement of its own, each waiting for an acker.
func TestAcksGrowWhileTheAckerIsBusy(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig(dbtest.URL(t))
	require.NoError(t, err)
	gate := &ackGate{open: make(chan struct{})}
	cfg.ConnConfig.Tracer = gate
	// Opened at the end at the latest, so a failed assertion cannot leave the
	// completer and the pool's cleanup stuck behind it.
	openGate := sync.OnceFunc(func() { close(gate.open) })
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	t.Cleanup(openGate)
	reg := prometheus.NewRegistry()
	e, err := New(pool, newFake(true), Config{Workers: 2, BatchSize: 2, AckBatch: 100}, nil, reg)
	require.NoError(t, err)
	e.results = make(chan result) // unbuffered: a send returns once the completer took it
	e.completer.Add(1)
	go e.complete()
	// Rows that do not exist: the statements match nothing, which is all this test needs.
	var pushed atomic.Int64
	push := func(i int) {
		e.results <- result{id: int64(-1 - i), attempts: 1, status: "sent"}
		pushed.Add(1)
	}
	push(0)
	require.Eventually(t, func() bool { return gate.started.Load() == 1 }, 30*time.Second, time.Millisecond,
		"an acknowledgement under way")
	go func() {
		for i := 1; i < 14; i++ {
			push(i)
		}
	}()
	// The completer takes the other results in while the acknowledgement waits
	// (before, it took one more and then waited for the acker: the workers with it).
	absorbed := eventually(func() bool { return pushed.Load() == 14 }, 10*time.Second)
	// One statement at a time: none starts beside the one held, though the 13
	// results are due (two ackers started a second at once). Asserted once the gate
	// is open.
	beside := eventually(func() bool { return gate.started.Load() > 1 }, 300*time.Millisecond)
	openGate()
	require.Eventually(t, func() bool { return pushed.Load() == 14 }, 30*time.Second, time.Millisecond)
	close(e.results)
	e.completer.Wait()
	var acks, rows float64
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == "sendonce_ack_batch_size" {
			h := f.GetMetric()[0].GetHistogram()
			acks, rows = float64(h.GetSampleCount()), h.GetSampleSum()
		}
	}
	require.Equal(t, 14.0, rows)
	// Nothing else is in flight, so the first result is due at once; the 13 that
	// came in meanwhile go in one statement (two, should the last arrive just as
	// the acker frees).
	require.False(t, beside, "an acknowledgement beside the one under way")
	require.LessOrEqual(t, acks, 3.0)
	require.True(t, absorbed)
}

// eventually polls cond until it holds or d has passed, and reports which.
func eventually(cond func() bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
