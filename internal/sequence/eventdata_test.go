package sequence_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// texts is a provider that keeps each message's subject and text by job id.
type texts struct {
	mu  sync.Mutex
	got map[string]string
}

func (r *texts) Idempotent() bool { return true }

func (r *texts) Send(_ context.Context, m provider.Message) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[m.JobID] = m.Subject + " | " + strings.TrimSpace(m.Text)
	return "id-" + m.JobID, nil
}

func (r *texts) get(job string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.got[job]
	return s, ok
}

// TestEventDataInTemplates: a step's templates see the triggering event's data as
// .Event (an absent key renders empty), and after a wait_for_event the awaited
// event's data merged in; a tracked event's data is bounded (422 naming /data).
func TestEventDataInTemplates(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := testfactory.New(e.pool).Template(t, acct, testfactory.Template{Name: "order", Subject: "Order {{.Event.order}}",
		Text: "Total {{.Event.total}} via {{.Event.carrier}}."})
	d := sequence.Definition{Name: "orders", Trigger: sequence.Trigger{Type: sequence.TriggerEvent, Event: "order.placed"},
		Steps: []sequence.Step{
			{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "shop@example.com"},
			{Type: sequence.StepWaitForEvent, Event: "order.shipped", Timeout: "3d", OnTimeout: "exit"},
			{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "shop@example.com"},
		}}
	seq, err := e.svc.Create(e.ctx, acct, d)
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	ada := e.subscriber(acct, "ada@example.com", 0)

	_, err = e.svc.Track(e.ctx, acct, "big", "order.placed", "ada@example.com",
		map[string]any{"blob": strings.Repeat("x", sequence.MaxEventDataBytes)})
	var ae *apperr.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "/data", ae.Fields[0].Pointer)
	require.Zero(t, e.int64(`SELECT count(*) FROM sequence_enrollments`), "a refused event changes nothing")

	rec := &texts{got: map[string]string{}}
	ex, err := executor.New(e.pool, rec, executor.Config{Tick: time.Hour, Workers: 2, BatchSize: 4,
		Poll: 10 * time.Millisecond, Sequences: e.adv, SequenceData: sequence.SendData(e.pool)}, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	_ = ex.Start(ctx) // the executor's Start never fails
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		require.NoError(t, ex.Stop(sctx))
	})

	_, err = e.svc.Track(e.ctx, acct, "o-1", "order.placed", "ada@example.com", map[string]any{"order": "A-17", "total": 42})
	require.NoError(t, err)
	first := sequence.JobID(seq.ID, 0, ada)
	require.Eventually(t, func() bool { _, ok := rec.get(first); return ok }, 30*time.Second, 10*time.Millisecond)
	got, _ := rec.get(first)
	require.Equal(t, "Order A-17 | Total 42 via .", got)

	e.clock.Add(time.Hour)
	_, err = e.svc.Track(e.ctx, acct, "s-1", "order.shipped", "ada@example.com", map[string]any{"carrier": "Post"})
	require.NoError(t, err)
	second := sequence.JobID(seq.ID, 2, ada)
	require.Eventually(t, func() bool { _, ok := rec.get(second); return ok }, 30*time.Second, 10*time.Millisecond)
	got, _ = rec.get(second)
	require.Equal(t, "Order A-17 | Total 42 via Post.", got)
}
