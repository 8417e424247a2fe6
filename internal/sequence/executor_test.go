package sequence_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sequence"
)

// recorder is the outside world: a provider that counts deliveries by job id.
type recorder struct {
	mu   sync.Mutex
	sent map[string]int
}

func (r *recorder) Idempotent() bool { return true }

func (r *recorder) Send(_ context.Context, m provider.Message) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent[m.JobID]++
	return "id-" + m.JobID, nil
}

func (r *recorder) snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.sent {
		out[k] = v
	}
	return out
}

// TestSequenceThroughExecutor: the executor advances a sequence (its advancer on
// the test's clock) and delivers each step through the campaigns' claim path,
// once per subscriber; pausing holds both; an opt-out during the pause stops the
// next step for that subscriber; the delivery invariant holds at the end.
func TestSequenceThroughExecutor(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl, list := e.template(acct), e.list(acct)
	seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerListJoined, ListID: &list}, "1h"))
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	e.clock.Add(time.Second)
	subs := []int64{e.subscriber(acct, "a@example.com", list), e.subscriber(acct, "b@example.com", list),
		e.subscriber(acct, "c@example.com", list)}

	rec := &recorder{sent: map[string]int{}}
	ex, err := executor.New(e.pool, rec, executor.Config{Tick: time.Hour, Workers: 2, BatchSize: 4,
		Poll: 10 * time.Millisecond, Sequences: e.adv}, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	_ = ex.Start(ctx) // the executor's Start never fails
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		require.NoError(t, ex.Stop(sctx))
		invariant.Require(t, e.pool, invariant.Options{Delivered: rec.snapshot()})
	})
	delivered := func(step int, ids ...int64) func() bool {
		return func() bool {
			got := rec.snapshot()
			for _, s := range ids {
				if got[sequence.JobID(seq.ID, step, s)] != 1 {
					return false
				}
			}
			return true
		}
	}
	require.Eventually(t, delivered(0, subs...), 30*time.Second, 10*time.Millisecond)

	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Pause)
	require.NoError(t, err)
	e.exec(`UPDATE list_members SET status = 'unsubscribed' WHERE subscriber_id = $1`, subs[1])
	e.clock.Add(time.Hour)
	n, err := e.adv.Tick(e.ctx) // what the executor's loop does, here synchronously
	require.NoError(t, err)
	require.Zero(t, n, "a paused sequence advances nothing")
	require.Len(t, rec.snapshot(), 3)

	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Resume)
	require.NoError(t, err)
	require.Eventually(t, delivered(2, subs[0], subs[2]), 30*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		state, _, reason := e.enrollment(seq.ID, subs[1])
		return state == "exited" && reason != nil && *reason == "left_list"
	}, 30*time.Second, 10*time.Millisecond)
	got := rec.snapshot()
	require.Len(t, got, 5)
	require.NotContains(t, got, sequence.JobID(seq.ID, 2, subs[1]))
	for job, n := range got {
		require.Equal(t, 1, n, job)
	}
}
