package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/transactional"
)

// Message retention deletes the settled messages accepted before the cutoff, with
// their send rows, a batch at a time; a message still queued stays however old,
// recent ones stay, and 0 keeps everything. A deleted message's key is free again.
func TestMessageRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	svc := transactional.NewService(pool, nil)
	subject, text := "Receipt", "Hi"
	send := func(key string) transactional.Message {
		m, _, err := svc.Send(ctx, acct, key, transactional.Request{To: "ada@example.com", From: "shop@example.com",
			Subject: &subject, Text: &text})
		require.NoError(t, err)
		return m
	}
	clk := newClock()
	ids := map[string]int64{}
	for key, s := range map[string]struct {
		age    time.Duration
		status string
	}{
		"old-sent": {10 * 24 * time.Hour, "sent"}, "old-unknown": {9 * 24 * time.Hour, "unknown"},
		"old-failed": {8 * 24 * time.Hour, "failed"}, "old-queued": {10 * 24 * time.Hour, "queued"},
		"recent-sent": {time.Hour, "sent"},
	} {
		ids[key] = send(key).ID
		f.exec(`UPDATE messages SET created_at = $2 WHERE id = $1`, ids[key], clk.Now().Add(-s.age))
		f.exec(`UPDATE sends SET status = $2 WHERE job_id = $1`, transactional.JobID(acct, key), s.status)
	}
	count := func(key string) int64 {
		return f.int64(`SELECT (SELECT count(*) FROM messages WHERE id = $1) + (SELECT count(*) FROM sends WHERE job_id = $2)`,
			ids[key], transactional.JobID(acct, key))
	}

	keep, err := New(pool, newFake(true), Config{Now: clk.Now}, nil, nil)
	require.NoError(t, err)
	n, err := keep.retainMessages(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "0 keeps every message")

	e, err := New(pool, newFake(true), Config{Now: clk.Now, MessageRetention: 7 * 24 * time.Hour}, nil, nil)
	require.NoError(t, err)
	e.retainBatch = 2 // three messages to delete: two statements, the second short
	n, err = e.retainMessages(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	for key, want := range map[string]int64{"old-sent": 0, "old-unknown": 0, "old-failed": 0, "old-queued": 2, "recent-sent": 2} {
		require.Equal(t, want, count(key), key)
	}
	_, err = svc.Get(ctx, acct, ids["old-sent"])
	require.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
	n, err = e.retainMessages(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "the next pass waits retentionEvery")

	again := send("old-sent")
	require.NotEqual(t, ids["old-sent"], again.ID, "a deleted message's key makes a new message")
}
