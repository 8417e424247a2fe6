package transactional_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/transactional"
)

// messageCount is what the account has stored: messages and their send rows.
func (e env) messageCount(t *testing.T) (messages, sends int64) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE account_id = $1`, e.account).Scan(&messages))
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE account_id = $1 AND job_id LIKE 'message:%'`,
		e.account).Scan(&sends))
	return messages, sends
}

func (e env) setDailyQuota(t *testing.T, n *int64) {
	t.Helper()
	_, err := e.pool.Exec(context.Background(), `UPDATE accounts SET quota_messages_per_day = $2 WHERE id = $1`, e.account, n)
	require.NoError(t, err)
}

// TestMessagesPerDayQuotaUnderConcurrency: forty concurrent first requests under
// a quota of seven accept exactly seven messages; the others are refused with the
// quota named and store nothing; the kept counter says seven.
func TestMessagesPerDayQuotaUnderConcurrency(t *testing.T) {
	t.Parallel()
	e := setup(t)
	seven := int64(7)
	e.setDailyQuota(t, &seven)

	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = e.trySend(fmt.Sprintf("burst-%d", i), fmt.Sprintf("r%d@example.com", i), "transactional")
		}()
	}
	close(start)
	wg.Wait()
	accepted := 0
	for _, err := range errs {
		if err == nil {
			accepted++
			continue
		}
		require.True(t, apperr.Is(err, apperr.DailyQuotaExceeded), "%v", err)
		var ae *apperr.Error
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "messages_per_day", ae.Extra["quota"])
		require.Equal(t, int64(7), ae.Extra["limit"])
	}
	require.Equal(t, 7, accepted, "never more accepted than the quota")
	messages, sends := e.messageCount(t)
	require.Equal(t, [2]int64{7, 7}, [2]int64{messages, sends}, "a refused message stores nothing")
	var kept int64
	require.NoError(t, e.pool.QueryRow(context.Background(),
		`SELECT messages FROM account_message_counts WHERE account_id = $1`, e.account).Scan(&kept))
	require.Equal(t, int64(7), kept)
}

// TestMessagesPerDayQuotaDay: the quota is per UTC day: past it a message is
// refused until the next UTC midnight (retry_after counts the seconds to it),
// and accepted again after; a retry of an accepted message still answers it (it
// takes nothing); a quota of 0 accepts none; an account without the quota keeps
// no counter; a message the service sends for a subscriber's double opt-in
// (SendTx) does not count.
func TestMessagesPerDayQuotaDay(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 6, 23, 59, 30, 0, time.UTC)
	e.svc.Now = func() time.Time { return now }

	e.send(t, "free-1", "ada@example.com", "transactional")
	var rows int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM account_message_counts`).Scan(&rows))
	require.Zero(t, rows, "no quota, no counter")

	two := int64(2)
	e.setDailyQuota(t, &two)
	first := e.send(t, "day-1", "ada@example.com", "transactional")
	e.send(t, "day-2", "bob@example.com", "transactional")
	_, err := e.trySend("day-3", "cy@example.com", "transactional")
	require.True(t, apperr.Is(err, apperr.DailyQuotaExceeded), "%v", err)
	var ae *apperr.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 30, ae.Extra["retry_after"], "seconds to the next UTC midnight")
	require.Equal(t, "2026-12-07T00:00:00Z", ae.Extra["resets_at"])
	require.Equal(t, int64(2), ae.Extra["used"])

	again, err := e.trySend("day-1", "ada@example.com", "transactional")
	require.NoError(t, err, "a retry of an accepted message is answered, not refused")
	require.Equal(t, first.ID, again.ID)

	// The double opt-in confirmation is the service's, in the sign-up's transaction.
	tx, err := e.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // rolled back after a failed assertion only
	subject, text := "Confirm", "Confirm please"
	_, created, err := e.svc.SendTx(ctx, tx, e.account, "optin-1", transactional.Request{To: "dee@example.com",
		From: "shop@example.com", Subject: &subject, Text: &text})
	require.NoError(t, err, "a confirmation is not counted")
	require.True(t, created)
	require.NoError(t, tx.Commit(ctx))

	now = now.Add(35 * time.Second) // the next UTC day
	e.send(t, "day-3", "cy@example.com", "transactional")

	zero := int64(0)
	e.setDailyQuota(t, &zero)
	_, err = e.trySend("day-4", "eve@example.com", "transactional")
	require.True(t, apperr.Is(err, apperr.DailyQuotaExceeded), "%v", err)
	messages, _ := e.messageCount(t)
	require.Equal(t, int64(5), messages, "free-1, day-1, day-2, optin-1, day-3")
}
