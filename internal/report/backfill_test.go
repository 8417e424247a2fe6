package report_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/report"
	"github.com/sendonce/sendonce/internal/store"
)

// migrationUp is the Up part of a migration file, from its marker to the Down one.
func migrationUp(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../db/migrations/" + name)
	require.NoError(t, err)
	up, _, ok := strings.Cut(string(b), "-- +goose Down")
	require.True(t, ok)
	_, up, ok = strings.Cut(up, "-- +goose Up")
	require.True(t, ok)
	return up
}

// TestBackfillCountersOfOlderCampaigns: a campaign acknowledged before the kept
// counters (its rows sent, bounced, unsubscribed, failed, some archived by
// retention, no counter kept) gets its counters from its rows by migrations 00551
// (statuses) and 00552 (sent and feedback), each run twice to no further change;
// a campaign whose counters were kept all along is left as it was.
func TestBackfillCountersOfOlderCampaigns(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	old := newFixture(t, pool, "old", 8)
	kept := newFixture(t, pool, "kept", 3)
	kept.ack(kept.sendIDs, "sent")
	kept.feedback(kept.sendIDs[0], "complaint")
	// The older campaign's rows as the statements before 00460 left them.
	old.exec(`UPDATE sends SET status = 'sent', sent_at = now(), lease_until = NULL WHERE id = ANY($1)`, old.sendIDs[:6])
	old.exec(`UPDATE sends SET status = 'failed', lease_until = NULL WHERE id = ANY($1)`, old.sendIDs[6:])
	old.exec(`UPDATE sends SET feedback = 'hard_bounce' WHERE id = $1`, old.sendIDs[0])
	old.exec(`UPDATE sends SET feedback = 'soft_bounce' WHERE id = $1`, old.sendIDs[1])
	old.exec(`UPDATE sends SET feedback = 'unsubscribe' WHERE id = $1`, old.sendIDs[2])
	old.exec(`INSERT INTO campaign_send_archive (campaign_id, account_id, status, n) VALUES ($1, $2, 'sent', 3),
		($1, $2, 'unknown', 2)`, old.campaignID, old.accountID)
	old.exec(`UPDATE campaigns SET status = 'sent', finished_at = now() WHERE id = ANY($1)`,
		[]int64{old.campaignID, kept.campaignID})
	old.exec(`DELETE FROM campaign_status_counts WHERE campaign_id = $1`, old.campaignID) // none kept before

	statuses := migrationUp(t, "00551_status_counters_backfill.sql")
	backfill := migrationUp(t, "00552_report_counters_backfill.sql")
	s := report.NewService(pool, campaign.NewService(pool))
	keptBefore, err := s.Campaign(old.ctx, kept.accountID, kept.campaignID, report.DefaultDomains)
	require.NoError(t, err)
	for range 2 {
		old.exec(statuses)
		old.exec(backfill)
		r, err := s.Campaign(old.ctx, old.accountID, old.campaignID, report.DefaultDomains)
		require.NoError(t, err)
		require.Equal(t, int64(9), r.Sent)
		require.Equal(t, report.Feedback{HardBounces: 1, SoftBounces: 1, UnsubProvider: 1}, r.Feedback)
		n, err := store.New(pool).CampaignStatusCounts(old.ctx, store.CampaignStatusCountsParams{AccountID: old.accountID,
			CampaignID: old.campaignID})
		require.NoError(t, err)
		require.Equal(t, store.CampaignStatusCountsRow{CampaignStatus: "sent", Sent: 9, Failed: 2, Unknown: 2}, n)
		var gmail int64
		for _, d := range r.Domains {
			if d.Domain == "gmail.com" {
				gmail = d.Sent
			}
		}
		require.Equal(t, int64(3), gmail) // rows 0, 3 and 5 of the fixture's domains
		k, err := s.Campaign(old.ctx, kept.accountID, kept.campaignID, report.DefaultDomains)
		require.NoError(t, err)
		require.Equal(t, keptBefore.Sent, k.Sent)
		require.Equal(t, keptBefore.Feedback, k.Feedback)
		require.Equal(t, keptBefore.Stats.Counts, k.Stats.Counts)
	}
}
