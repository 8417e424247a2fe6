package campaign_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
)

func TestTrackingSwitchesDefaultAndApprovalStoresLinksOnce(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	s := campaign.NewService(pool)
	links := func(id int64) []string {
		rows, err := pool.Query(ctx, `SELECT url FROM tracked_links WHERE campaign_id = $1 AND account_id = $2 ORDER BY idx`, id, acc.ID)
		require.NoError(t, err)
		var out []string
		for rows.Next() {
			var u string
			require.NoError(t, rows.Scan(&u))
			out = append(out, u)
		}
		require.NoError(t, rows.Err())
		return out
	}
	html := `<a href="https://a.example/x">x</a> <a href="{{.UnsubscribeURL}}">u</a> <a href="https://a.example/x">again</a> <a href="https://b.example/">b</a>`
	c, err := s.Create(ctx, acc.ID, campaign.Fields{Name: str("c"), Subject: str("s"), FromEmail: str("a@example.com"),
		HTMLTemplate: str(html)})
	require.NoError(t, err)
	require.True(t, c.TrackClicks)
	require.False(t, c.TrackOpens)
	require.False(t, c.Archive)
	require.Empty(t, links(c.ID), "nothing is stored before approval")

	_, err = s.Approve(ctx, acc.ID, c.ID, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"https://a.example/x", "https://b.example/"}, links(c.ID))

	// Back to draft, new content, switches changed: approval stores the new list.
	_, err = s.Unapprove(ctx, acc.ID, c.ID)
	require.NoError(t, err)
	yes := true
	c, err = s.Update(ctx, acc.ID, c.ID, campaign.Fields{HTMLTemplate: str(`<a href="https://c.example/">c</a>`),
		TrackOpens: &yes, Archive: &yes})
	require.NoError(t, err)
	require.True(t, c.TrackOpens && c.Archive && c.TrackClicks)
	_, err = s.Approve(ctx, acc.ID, c.ID, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"https://c.example/"}, links(c.ID))

	// Clicks off: nothing stored.
	no := false
	d, err := s.Create(ctx, acc.ID, campaign.Fields{Name: str("d"), Subject: str("s"), FromEmail: str("a@example.com"),
		HTMLTemplate: str(html), TrackClicks: &no})
	require.NoError(t, err)
	require.False(t, d.TrackClicks)
	_, err = s.Approve(ctx, acc.ID, d.ID, nil)
	require.NoError(t, err)
	require.Empty(t, links(d.ID))
}
