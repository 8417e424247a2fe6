package report_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
)

// TestRetryFailedOnce: a sent campaign's failed rows go back to the queue with
// their job ids, its unknown rows stay, the campaign sends again; a second retry,
// a retry of a campaign without failed rows and another account's retry are
// refused and change nothing.
func TestRetryFailedOnce(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := newFixture(t, pool, "a", 10)
	b := newFixture(t, pool, "b", 2)
	ids := f.sendIDs
	f.ack(ids[:6], "sent")
	f.ack(ids[6:8], "failed")
	f.ack(ids[8:], "unknown")
	f.exec(`UPDATE campaigns SET status = 'sent', finished_at = now() WHERE id = $1`, f.campaignID)
	b.ack(b.sendIDs, "sent")
	f.exec(`UPDATE campaigns SET status = 'sent', finished_at = now() WHERE id = $1`, b.campaignID)
	s := campaign.NewService(pool)
	jobs := func() map[string]string {
		rows, err := pool.Query(f.ctx, `SELECT job_id, status FROM sends WHERE campaign_id = $1`, f.campaignID)
		require.NoError(t, err)
		out := map[string]string{}
		for rows.Next() {
			var j, st string
			require.NoError(t, rows.Scan(&j, &st))
			out[j] = st
		}
		require.NoError(t, rows.Err())
		return out
	}
	before := jobs()

	_, _, err := s.RetryFailed(f.ctx, b.accountID, f.campaignID)
	require.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
	_, _, err = s.RetryFailed(f.ctx, b.accountID, b.campaignID) // sent, nothing failed
	require.True(t, apperr.Is(err, apperr.Conflict), "%v", err)

	c, n, err := s.RetryFailed(f.ctx, f.accountID, f.campaignID)
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	require.Equal(t, campaign.StatusSending, c.Status)
	after := jobs()
	require.Len(t, after, len(before))
	for job, st := range before {
		want := st
		if st == "failed" {
			want = "queued"
		}
		require.Equal(t, want, after[job], job) // same job ids; unknown rows untouched
	}

	f.exec(`UPDATE campaigns SET status = 'sent', finished_at = now() WHERE id = $1`, f.campaignID)
	f.exec(`UPDATE sends SET status = 'failed' WHERE campaign_id = $1 AND status = 'queued'`, f.campaignID)
	_, _, err = s.RetryFailed(f.ctx, f.accountID, f.campaignID)
	require.True(t, apperr.Is(err, apperr.Conflict), "a second retry: %v", err)
	var failed int
	require.NoError(t, pool.QueryRow(f.ctx, `SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'failed'`,
		f.campaignID).Scan(&failed))
	require.Equal(t, 2, failed)
}
