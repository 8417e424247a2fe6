package sequence_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/sequence"
)

// TestStatsKeysAreBounded: the stats group a step's outcomes by outcome and
// reason, not by the times the timeline lines carry: 40 enrollments waiting until
// 40 different times are one "waiting:until" key of 40, and the same enrollments
// skipped as late, each due at its own time, one "skipped:late" key. The times
// stay on each enrollment's timeline.
func TestStatsKeysAreBounded(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	d := welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h")
	d.LateAfterText = "30m"
	seq, err := e.svc.Create(e.ctx, acct, d)
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(t, err)
	const n = 40
	for i := range n {
		sub := e.subscriber(acct, fmt.Sprintf("s%d@example.com", i), 0)
		_, _, err := e.svc.Enroll(e.ctx, acct, seq.ID, sub, "", nil)
		require.NoError(t, err)
		e.tick()
		e.clock.Add(time.Second) // each waits until a time of its own
	}
	keys := func(st sequence.Stats) int {
		k := len(st.Enrollments)
		for _, s := range st.Steps {
			k += len(s.Outcomes) + len(s.Sends)
		}
		return k
	}
	st, err := e.svc.Stats(e.ctx, acct, seq.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"waiting:until": n}, st.Steps[1].Outcomes)
	require.Equal(t, map[string]int64{"entered": n, "sent": n}, st.Steps[0].Outcomes)
	require.LessOrEqual(t, keys(st), 5, "%+v", st)

	e.clock.Add(4 * time.Hour) // the advancer was down: every second send is late
	for e.tick() > 0 {
	}
	st, err = e.svc.Stats(e.ctx, acct, seq.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"skipped:late": n}, st.Steps[2].Outcomes)
	require.Equal(t, int64(n), st.Enrollments["completed"])
	require.LessOrEqual(t, keys(st), 7, "%+v", st)

	// The times are the timeline's.
	list, err := e.svc.Enrollments(e.ctx, acct, seq.ID, "s7@example.com", 0, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	var reasons []string
	for _, l := range list[0].Timeline {
		if l.Reason != nil {
			reasons = append(reasons, *l.Reason)
		}
	}
	require.Contains(t, fmt.Sprint(reasons), "until 20")
	require.Contains(t, fmt.Sprint(reasons), "late: due 20")
}
