package campaign_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// outcomes answers each recipient r<i>@example.com by its number: 1–5 refused
// (permanent: failed), 6–8 lost after the handover (ambiguous through a provider
// that cannot deduplicate: unknown), 9 refused for now once (temporary, then
// sent), the rest accepted.
type outcomes struct {
	mu    sync.Mutex
	calls map[string]int
}

func (o *outcomes) Idempotent() bool { return false }

func (o *outcomes) Send(_ context.Context, m provider.Message) (string, error) {
	o.mu.Lock()
	o.calls[m.To]++
	n := o.calls[m.To]
	o.mu.Unlock()
	switch strings.TrimSuffix(m.To, "@example.com") {
	case "r1", "r2", "r3", "r4", "r5":
		return "", &provider.Error{Class: provider.Permanent, Code: 550, Err: errors.New("no such user")}
	case "r6", "r7", "r8":
		return "", &provider.Error{Class: provider.Ambiguous, Err: errors.New("connection lost after DATA")}
	case "r9":
		if n == 1 {
			return "", &provider.Error{Class: provider.Temporary, Code: 451, Err: errors.New("try later")}
		}
	}
	return "id-" + m.JobID, nil
}

// TestStatsEqualRecountAfterARun: /stats reads the kept counters, and after an
// executor sent a campaign with every outcome the provider gives (sent, sent
// after a temporary refusal, failed, unknown) they answer what a recount of the rows says.
// A counter changed by hand shows in /stats and not in the recount: the numbers
// come from the counters (this failed while /stats recounted the rows).
func TestStatsEqualRecountAfterARun(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	fx := testfactory.New(pool)
	fx.BulkSubscribers(t, acc.ID, testfactory.Bulk{Prefix: "r", N: 40, Name: "R", Statuses: []string{"confirmed"}})
	now := time.Now()
	id := fx.Campaign(t, acc.ID, testfactory.Campaign{Subject: "Hi", FromEmail: "news@example.com", HTML: "<p>Hi</p>",
		Text: "Hi", Status: "approved", ScheduledFor: &now, ApprovedAt: &now})
	// Suppressed before the build: left out, no send row (the build's skip).
	fx.Suppression(t, acc.ID, "r40@example.com", "manual", "t")

	p := &outcomes{calls: map[string]int{}}
	ex, err := executor.New(pool, p, executor.Config{Tick: 50 * time.Millisecond, Workers: 4, BatchSize: 8, Poll: 10 * time.Millisecond,
		BackoffBase: 10 * time.Millisecond, BackoffMax: 20 * time.Millisecond, AckInterval: 5 * time.Millisecond}, nil, nil)
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	_ = ex.Start(runCtx) // the executor's Start never fails
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		require.NoError(t, ex.Stop(sctx))
	}
	t.Cleanup(stop)
	require.Eventually(t, func() bool {
		var st string
		require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM campaigns WHERE id = $1`, id).Scan(&st))
		return st == "sent"
	}, time.Minute, 10*time.Millisecond)
	stop()
	invariant.Require(t, pool, invariant.Options{KeptCounters: true})

	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := campaign.NewServiceClock(pool, clk.now)
	recount := func() map[string]int64 {
		n, err := store.New(pool).CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: acc.ID, CampaignID: id})
		require.NoError(t, err)
		return map[string]int64{"queued": n.Queued, "sending": n.Sending, "sent": n.Sent, "failed": n.Failed,
			"suppressed": n.Suppressed, "cancelled": n.Cancelled, "unknown": n.Unknown}
	}
	st, err := s.Stats(ctx, acc.ID, id)
	require.NoError(t, err)
	require.Equal(t, recount(), st.Counts)
	require.Equal(t, map[string]int64{"queued": 0, "sending": 0, "sent": 31, "failed": 5, "suppressed": 0, "cancelled": 0, "unknown": 3}, st.Counts)
	require.Equal(t, int64(39), st.Total)

	_, err = pool.Exec(ctx, `UPDATE campaign_status_counts SET n = n + 100 WHERE campaign_id = $1 AND status = 'failed'`, id)
	require.NoError(t, err)
	clk.add(campaign.StatsTTL + time.Millisecond)
	st, err = s.Stats(ctx, acc.ID, id)
	require.NoError(t, err)
	require.Equal(t, int64(105), st.Counts["failed"], "read from the kept counters")
	require.Equal(t, int64(5), recount()["failed"])
	_, err = pool.Exec(ctx, `UPDATE campaign_status_counts SET n = n - 100 WHERE campaign_id = $1 AND status = 'failed'`, id)
	require.NoError(t, err)
}
