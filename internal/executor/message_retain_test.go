package executor

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
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

// Retention deletes a message's references to its files; the sweep then deletes
// a file nothing references once it is attachmentGrace old, and keeps one another
// message (or another account) still references, and one stored too recently.
func TestAttachmentSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	a, b := f.account("a"), f.account("b")
	svc := transactional.NewService(pool, nil)
	subject, text := "Receipt", "Hi"
	send := func(acct int64, key string, files ...string) transactional.Message {
		var atts []transactional.Attachment
		for _, name := range files {
			atts = append(atts, transactional.Attachment{Filename: name + ".txt", Content: base64.StdEncoding.EncodeToString([]byte(name))})
		}
		m, _, err := svc.Send(ctx, acct, key, transactional.Request{To: "ada@example.com", From: "shop@example.com",
			Subject: &subject, Text: &text, Attachments: atts})
		require.NoError(t, err)
		return m
	}
	clk := newClock()
	old := send(a, "old", "shared", "only-old")
	send(a, "keeps", "shared")
	send(b, "other-account", "only-old")
	f.exec(`UPDATE messages SET created_at = $1`, clk.Now().Add(-10*24*time.Hour))
	f.exec(`UPDATE sends SET status = 'sent' WHERE job_id = $1`, transactional.JobID(a, "old"))
	f.exec(`UPDATE attachment_blobs SET last_used_at = $1`, clk.Now().Add(-2*attachmentGrace))

	e, err := New(pool, newFake(true), Config{Now: clk.Now, MessageRetention: 7 * 24 * time.Hour}, nil, nil)
	require.NoError(t, err)
	n, err := e.retainMessages(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.Zero(t, f.int64(`SELECT count(*) FROM message_attachments WHERE message_id = $1`, old.ID))
	// A file stored again just now (a request in flight) is not swept either.
	fresh := send(a, "fresh", "fresh")
	f.exec(`DELETE FROM messages WHERE id = $1`, fresh.ID)
	freshSum := sha256.Sum256([]byte("fresh"))
	f.exec(`UPDATE attachment_blobs SET last_used_at = $1 WHERE sha256 = $2`, clk.Now(), freshSum[:]) // the test's clock

	n, err = e.sweepAttachments(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "only a's only-old")
	for _, c := range []struct {
		acct    int64
		content string
		want    int64
	}{{a, "shared", 1}, {a, "only-old", 0}, {b, "only-old", 1}, {a, "fresh", 1}} {
		sum := sha256.Sum256([]byte(c.content))
		require.Equal(t, c.want, f.int64(`SELECT count(*) FROM attachment_blobs WHERE account_id = $1 AND sha256 = $2`,
			c.acct, sum[:]), "%d %s", c.acct, c.content)
	}
}
