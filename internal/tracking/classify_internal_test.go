package tracking

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The user agents below are the ones these fetchers publish or are recorded
// sending (docs/engagement.md lists the sources).
func TestUserAgentClassification(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind, ua string
		want     []string
	}{
		// People.
		{kindClick, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", nil},
		{kindClick, "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", nil},
		{kindClick, "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", nil},
		{kindClick, "Mozilla/5.0 (Linux; Android 10; CUBOT_X19) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36", nil},
		{kindClick, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", nil},
		// Gmail fetches images through its proxy when the message is opened: an open.
		{kindOpen, "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)", nil},
		// Apple Mail Privacy Protection's proxy: the bare "Mozilla/5.0".
		{kindOpen, "Mozilla/5.0", []string{ReasonAppleMPP}},
		{kindClick, "Mozilla/5.0", []string{ReasonBareUA}},
		{kindOpen, "", []string{ReasonNoUA}},
		// Crawlers and link previewers.
		{kindClick, "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", []string{ReasonScannerUA}},
		{kindClick, "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", []string{ReasonScannerUA}},
		{kindClick, "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", []string{ReasonScannerUA}},
		{kindClick, "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", []string{ReasonScannerUA}},
		{kindClick, "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", []string{ReasonScannerUA}},
		{kindClick, "Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com", []string{ReasonScannerUA}},
		{kindClick, "WhatsApp/2.23.20.0", []string{ReasonScannerUA}},
		// Microsoft's page-snapshot fetcher, as its crawler page (Bing Webmaster Help, "Which crawlers does Bing
		// use") and fetch logs give it: a browser string with a BingPreview/1.0b token and no "bot" or URL.
		{kindClick, "Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/534+ (KHTML, like Gecko) BingPreview/1.0b", []string{ReasonScannerUA}},
		{kindClick, "Mozilla/5.0 (Windows Phone 8.1; ARM; Trident/7.0; Touch; rv:11.0; IEMobile/11.0; NOKIA; Lumia 530) like Gecko BingPreview/1.0b", []string{ReasonScannerUA}},
		{kindClick, "Mozilla/5.0 (iPhone; CPU iPhone OS 7_0 like Mac OS X) AppleWebKit/537.51.1 (KHTML, like Gecko) Version/7.0 Mobile/11A465 Safari/9537.53 BingPreview/1.0b", []string{ReasonScannerUA}},
		{kindClick, "Mozilla/5.0 (Windows NT 6.3; WOW64; Trident/7.0; rv:11.0; BingPreview/1.0b) like Gecko", []string{ReasonScannerUA}},
		{kindOpen, "Mozilla/5.0 (compatible; MSIE 10.0; Windows NT 6.2; Trident/6.0; WOW64; Trident/6.0; BingPreview/1.0b)", []string{ReasonScannerUA}},
		// Its successor for Microsoft's link previews (Teams, Outlook).
		{kindClick, "Mozilla/5.0 (compatible; MicrosoftPreview/2.0; +https://aka.ms/MicrosoftPreview)", []string{ReasonScannerUA}},
		// Libraries, tools and headless browsers (what URL sandboxes drive).
		{kindClick, "python-requests/2.31.0", []string{ReasonScannerUA}},
		{kindClick, "curl/8.5.0", []string{ReasonScannerUA}},
		{kindClick, "Go-http-client/1.1", []string{ReasonScannerUA}},
		{kindClick, "Java/1.8.0_392", []string{ReasonScannerUA}},
		{kindClick, "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.109 Safari/537.36", []string{ReasonScannerUA}},
		// Gateways that name themselves.
		{kindClick, "Mozilla/5.0 (compatible; Barracuda Sentinel (EE))", []string{ReasonScannerUA}},
		{kindClick, "Proofpoint URL Defense", []string{ReasonScannerUA}},
	} {
		require.Equal(t, c.want, uaReasons(c.kind, c.ua), c.ua)
	}
}

func TestNewHitReasons(t *testing.T) {
	t.Parallel()
	chrome := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	s := Send{AccountID: 1, CampaignID: 2, SendID: 3}
	now := time.Unix(1_700_000_000, 0)
	require.Empty(t, newHit(kindClick, s, 1, 2, now, "GET", chrome).Reasons)
	require.Equal(t, []string{ReasonHead}, newHit(kindClick, s, 1, 2, now, "HEAD", chrome).Reasons)
	require.Equal(t, []string{ReasonHoneypot}, newHit(kindClick, s, 0, 2, now, "GET", chrome).Reasons)
	require.Equal(t, []string{ReasonHead, ReasonScannerUA, ReasonHoneypot}, newHit(kindClick, s, 0, 2, now, "HEAD", "curl/8").Reasons)
	require.Len(t, newHit(kindOpen, s, 0, 0, now, "GET", string(make([]byte, 2000))).UA, 512)
}

func TestBurstOnEveryLinkWithinTheWindow(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	hit := func(send int64, link, links, ms int) *Hit {
		return &Hit{Send: Send{AccountID: 1, CampaignID: 2, SendID: send}, Kind: kindClick, Link: link, Links: links, At: at(ms)}
	}
	// Send 10: a gateway fetched its three links in 400 ms. Send 11: a person
	// clicked two of three. Send 12: all three, but over minutes. Send 13: one
	// link only in its message (never a burst). Send 14: the run straddles an
	// earlier flush: its first click was written already.
	written := hit(14, 1, 2, 0)
	written.done = true
	todo := []*Hit{
		hit(10, 1, 3, 0), hit(10, 2, 3, 150), hit(10, 3, 3, 400),
		hit(11, 1, 3, 0), hit(11, 2, 3, 300),
		hit(12, 1, 3, 0), hit(12, 2, 3, 60_000), hit(12, 3, 3, 120_000),
		hit(13, 1, 1, 0),
		hit(14, 2, 2, 900),
	}
	seen := append([]*Hit{written}, todo...)
	classifyBursts(todo, seen, time.Second)
	for _, h := range todo {
		want := h.SendID == 10 || h.SendID == 14
		require.Equal(t, want, len(h.Reasons) == 1 && h.Reasons[0] == ReasonBurst, "send %d link %d", h.SendID, h.Link)
	}
}
