package tracking

import (
	"sort"
	"strings"
	"time"
)

// The reasons a hit is suspected of being a bot (tracking_hits.bot_reasons,
// the events' bot_reasons). docs/engagement.md gives each one's source.
const (
	ReasonHead      = "head"       // a HEAD request: link checkers, never a browser following a link
	ReasonScannerUA = "scanner_ua" // a user agent of a crawler, scanner, HTTP library or link previewer
	ReasonNoUA      = "no_ua"      // no user agent at all
	ReasonAppleMPP  = "apple_mpp"  // an open by Apple Mail Privacy Protection's proxy (bare "Mozilla/5.0")
	ReasonBareUA    = "bare_ua"    // a click with the bare "Mozilla/5.0" of a proxy, not a browser
	ReasonHoneypot  = "honeypot"   // the hidden link no person sees was followed
	ReasonBurst     = "burst"      // every tracked link of the message hit within BurstWindow
	ReasonDelivery  = "delivery"   // within the delivery window of the send's sent_at (decided in SQL)
)

// scannerUA are lower-case substrings of the user agents of automated fetchers:
// search crawlers, link previewers, HTTP libraries and command-line tools,
// headless browsers (which URL detonation sandboxes drive), and the mail security
// gateways whose names appear in their fetchers' user agents.
var scannerUA = []string{
	// Crawlers and previewers that name themselves (robots pages of Google, Bing,
	// Slack, Meta, Discord, Microsoft Teams/Skype, WhatsApp, Telegram, LinkedIn).
	// BingPreview's user agents are a browser's with a "BingPreview/1.0b" token:
	// no "bot", no contact URL, so only its name tells it.
	"crawler", "spider", "slurp", "facebookexternalhit", "skypeuripreview", "whatsapp/", "linkedinbot",
	"bingpreview", "microsoftpreview", "embedly", "+http://", "+https://",
	// HTTP libraries and tools.
	"python-requests", "python-urllib", "python-httpx", "aiohttp", "go-http-client", "curl/", "wget/",
	"java/", "okhttp", "apache-httpclient", "libwww-perl", "node-fetch", "axios/", "httpclient",
	// Headless browsers.
	"headlesschrome", "phantomjs", "puppeteer", "playwright", "selenium",
	// Mail security gateways and URL scanners.
	"proofpoint", "mimecast", "barracuda", "ironport", "forcepoint", "symantec", "mcafee", "trend micro",
	"trendmicro", "sophos", "fortiguard", "safelinks", "urldefense", "virustotal", "scanner",
}

// isBotWord reports whether ua has "bot" as the end of a word (Googlebot/2.1,
// bingbot, Slackbot-LinkExpanding, Discordbot, Twitterbot) rather than inside one.
func isBotWord(ua string) bool {
	for i := 0; ; {
		j := strings.Index(ua[i:], "bot")
		if j < 0 {
			return false
		}
		end := i + j + 3
		if end == len(ua) || ua[end] < 'a' || ua[end] > 'z' {
			if !strings.HasSuffix(ua[:end], "cubot") { // a phone brand
				return true
			}
		}
		i = end
	}
}

// uaReasons classifies a user agent for a hit of kind ("click" or "open").
func uaReasons(kind, ua string) []string {
	ua = strings.TrimSpace(ua)
	switch {
	case ua == "":
		return []string{ReasonNoUA}
	case ua == "Mozilla/5.0":
		if kind == kindOpen {
			return []string{ReasonAppleMPP}
		}
		return []string{ReasonBareUA}
	}
	l := strings.ToLower(ua)
	if isBotWord(l) {
		return []string{ReasonScannerUA}
	}
	for _, s := range scannerUA {
		if strings.Contains(l, s) {
			return []string{ReasonScannerUA}
		}
	}
	return nil
}

// Hit kinds.
const (
	kindClick = "click"
	kindOpen  = "open"
)

// Hit is one recorded request to /c or /o.
type Hit struct {
	Send
	Kind   string
	Link   int // a click's link index (0: honeypot)
	Links  int // the tracked links of the message (from the click token)
	At     time.Time
	Method string
	UA     string
	// Reasons are the bot reasons known when the hit arrived; classifyBursts adds
	// "burst" and the insert adds "delivery".
	Reasons  []string
	done     bool // written, or given up (guarded by Service.mu)
	attempts int  // failed statements it was part of (guarded by Service.mu)
}

// newHit classifies what one request alone says.
func newHit(kind string, s Send, link, links int, at time.Time, method, ua string) Hit {
	if len(ua) > 512 {
		ua = ua[:512]
	}
	h := Hit{Send: s, Kind: kind, Link: link, Links: links, At: at, Method: method, UA: ua}
	if method == "HEAD" {
		h.Reasons = append(h.Reasons, ReasonHead)
	}
	h.Reasons = append(h.Reasons, uaReasons(kind, ua)...)
	if kind == kindClick && link == 0 {
		h.Reasons = append(h.Reasons, ReasonHoneypot)
	}
	return h
}

// classifyBursts marks "burst" on the clicks in todo that belong to a run of
// clicks of one send, all within window of each other, that covers every tracked
// link of its message (at least two): a gateway fetching the whole message, not a
// person choosing a link. seen holds the other clicks that may share a run with
// them (earlier ones already written, later ones still held).
func classifyBursts(todo []*Hit, seen []*Hit, window time.Duration) {
	bySend := map[int64][]*Hit{}
	for _, h := range seen {
		if h.Kind == kindClick && h.Link > 0 && h.Links >= 2 {
			bySend[h.SendID] = append(bySend[h.SendID], h)
		}
	}
	for _, h := range todo {
		if h.Kind != kindClick || h.Link == 0 || h.Links < 2 {
			continue
		}
		run := bySend[h.SendID]
		sort.Slice(run, func(i, j int) bool { return run[i].At.Before(run[j].At) })
		if coveredByRun(h, run, window) {
			h.Reasons = append(h.Reasons, ReasonBurst)
		}
	}
}

// coveredByRun reports whether some window-long span of run holding h holds
// every link index 1..h.Links. run is sorted by time.
func coveredByRun(h *Hit, run []*Hit, window time.Duration) bool {
	for i := range run {
		start := run[i].At
		if start.After(h.At) || h.At.Sub(start) > window {
			continue
		}
		links := map[int]bool{}
		for _, o := range run[i:] {
			if o.At.Sub(start) > window {
				break
			}
			links[o.Link] = true
		}
		if len(links) >= h.Links {
			return true
		}
	}
	return false
}
