package executor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrackedCampaignLinksNameTheSend: with clicks and opens tracked, the message
// sent carries click URLs naming the send row and each link of the campaign's
// template, the open pixel and the web view of the same send; with tracking off,
// the campaign's own links.
func TestTrackedCampaignLinksNameTheSend(t *testing.T) {
	t.Parallel()
	clk := newClock()
	p := newFake(true)
	f, e, c := started(t, 2, "skip", p, clk)
	e.cfg.Tracking = func(accountID, campaignID, sendID int64, links int, clicks, opens bool) (func(int) string, string, string) {
		var click func(int) string
		if clicks {
			click = func(i int) string {
				return fmt.Sprintf("https://t.example/c/%d-%d-%d-%dof%d", accountID, campaignID, sendID, i, links)
			}
		}
		open := ""
		if opens {
			open = fmt.Sprintf("https://t.example/o/%d", sendID)
		}
		return click, open, fmt.Sprintf("https://t.example/v/%d", sendID)
	}
	f.exec(`UPDATE campaigns SET track_opens = true, html_template =
		'<p><a href="https://shop.example/a">A</a> <a href="https://shop.example/b">B</a> <a href="{{.WebViewURL}}">web</a></p>'
		WHERE id = $1`, c.ID)
	c = sendingCampaign(t, e, c.ID)
	row := outcome(t, e, c)
	_, _, sent := p.snapshot()
	require.Len(t, sent, 1)
	h := sent[0].HTML
	for _, want := range []string{
		fmt.Sprintf(`href="https://t.example/c/%d-%d-%d-1of2"`, c.AccountID, c.ID, row.ID),
		fmt.Sprintf(`href="https://t.example/c/%d-%d-%d-2of2"`, c.AccountID, c.ID, row.ID),
		fmt.Sprintf(`href="https://t.example/c/%d-%d-%d-0of2"`, c.AccountID, c.ID, row.ID), // the honeypot
		fmt.Sprintf(`src="https://t.example/o/%d"`, row.ID),
		fmt.Sprintf(`href="https://t.example/v/%d"`, row.ID),
	} {
		require.Contains(t, h, want)
	}
	require.NotContains(t, h, "shop.example")

	f.exec(`UPDATE campaigns SET track_clicks = false, track_opens = false WHERE id = $1`, c.ID)
	c = sendingCampaign(t, e, c.ID)
	row = outcome(t, e, c)
	_, _, sent = p.snapshot()
	h = sent[1].HTML
	require.Contains(t, h, `href="https://shop.example/a"`)
	require.NotContains(t, h, "t.example/c/")
	require.NotContains(t, h, "t.example/o/")
	require.Contains(t, h, fmt.Sprintf(`href="https://t.example/v/%d"`, row.ID), "the web view needs no tracking")
}
