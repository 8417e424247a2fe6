package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// Sequence retention deletes, for enrollments that ended before the cutoff, their
// settled step sends (with their event data) and their step log lines, and the
// tracked events posted before it; a running enrollment's rows, a recently ended
// one's and the enrollment rows themselves stay, and 0 keeps everything.
func TestSequenceRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	clk := newClock()
	acct := f.account("a")
	tpl := testfactory.New(pool).Template(t, acct, testfactory.Template{Name: "t", Subject: "Hi", Text: "Order {{.Event.order}}"})
	svc := sequence.NewService(pool)
	svc.Now = clk.Now
	adv := &sequence.Advancer{Pool: pool, Now: clk.Now}
	send := sequence.Step{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "shop@example.com"}
	seq, err := svc.Create(ctx, acct, sequence.Definition{Name: "orders",
		Trigger: sequence.Trigger{Type: sequence.TriggerEvent, Event: "order"},
		Steps:   []sequence.Step{send, {Type: sequence.StepWait, Duration: "20d"}, send}})
	require.NoError(t, err)
	_, err = svc.Transition(ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	old := f.subscribers(acct, "old", 1, "confirmed")
	running := f.subscribers(acct, "running", 1, "confirmed")
	recent := f.subscribers(acct, "recent", 1, "confirmed")
	track := func(id, email string) {
		_, err := svc.Track(ctx, acct, id, "order", email, map[string]any{"order": id})
		require.NoError(t, err)
	}
	tick := func() {
		_, err := adv.Tick(ctx)
		require.NoError(t, err)
	}
	track("o-old", "old1@example.com")
	track("o-running", "running1@example.com")
	tick()
	clk.Add(20 * 24 * time.Hour)
	tick() // old and running: both complete now...
	f.exec(`UPDATE sequence_enrollments SET state = 'active', due_at = $2, finished_at = NULL
		WHERE subscriber_id = $1`, running, clk.Now().Add(time.Hour)) // ...but running is held at its last step
	f.exec(`UPDATE sends SET status = 'sent'`)
	clk.Add(10 * 24 * time.Hour)
	track("o-recent", "recent1@example.com")
	tick()
	f.exec(`UPDATE sends SET status = 'sent'`)
	rows := func(sub int64) [3]int64 {
		return [3]int64{
			f.int64(`SELECT count(*) FROM sends s JOIN sequence_steps st ON st.campaign_id = s.campaign_id WHERE s.subscriber_id = $1`, sub),
			f.int64(`SELECT count(*) FROM sequence_step_log l JOIN sequence_enrollments e ON e.id = l.enrollment_id WHERE e.subscriber_id = $1`, sub),
			f.int64(`SELECT count(*) FROM sequence_send_data d JOIN sends s ON s.job_id = d.job_id WHERE s.subscriber_id = $1`, sub),
		}
	}
	before := map[int64][3]int64{old: rows(old), running: rows(running), recent: rows(recent)}
	require.Equal(t, [3]int64{2, 5, 2}, before[old]) // entered, sent, waiting, sent, completed

	keep, err := New(pool, newFake(true), Config{Now: clk.Now}, nil, nil)
	require.NoError(t, err)
	n, err := keep.retainSequences(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "0 keeps every row")

	e, err := New(pool, newFake(true), Config{Now: clk.Now, SequenceRetention: 7 * 24 * time.Hour}, nil, nil)
	require.NoError(t, err)
	e.retainBatch = 2 // several batches
	n, err = e.retainSequences(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2+5+2, n) // old's sends and log lines, o-old's and o-running's events
	require.Equal(t, [3]int64{0, 0, 0}, rows(old))
	require.Equal(t, before[running], rows(running), "a running enrollment keeps its rows")
	require.Equal(t, before[recent], rows(recent), "a recent one too")
	require.EqualValues(t, 3, f.int64(`SELECT count(*) FROM sequence_enrollments`), "the enrollments stay")
	require.EqualValues(t, 1, f.int64(`SELECT count(*) FROM track_events`))
	// The old subscriber's enrollment still holds: a new trigger enrolls nobody twice.
	track("o-old-2", "old1@example.com")
	require.EqualValues(t, 3, f.int64(`SELECT count(*) FROM sequence_enrollments`))
	n, err = e.retainSequences(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "the next pass waits")
}
