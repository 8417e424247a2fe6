package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dnscheck/dnschecktest"
)

// TestDashboardEngagementAndDomains drives the campaign page's engagement and the
// Senders page's domain check on a fresh database. A campaign tracking clicks and
// opens is sent (the dev inbox keeps its messages); its links are followed by a
// browser's user agent and by curl's (a suspected bot), and its open image
// fetched: the page shows the clicks per link, the click and open totals, people
// apart from suspected bots, exactly as the API counts them, and why opens are
// unreliable. A campaign tracking neither shows no engagement. The domain check,
// against a local DNS zone, shows a passing domain and a failing one with the
// records to publish; an address that is no public domain is refused at its field.
// No JavaScript error, no serious or critical axe violation.
func TestDashboardEngagementAndDomains(t *testing.T) {
	bin, axe := chromiumPath(t), axeScript(t)
	zone := map[string][]string{
		"good.com.":                   {"v=spf1 include:amazonses.com ~all"},
		"resend._domainkey.good.com.": {"v=DKIM1; p=MIGfMA0GCSqGSIb3"},
		"_dmarc.good.com.":            {"v=DMARC1; p=none"},
		"bad.com.":                    {"v=spf1 +all"},
	}
	dnsAddr := localZone(t, zone)
	base, cfg := pagesService(t, func(c *config.Config) { c.DNSServer = dnsAddr }, manyInFlight)
	b := newPagesBrowser(t, bin, axe)
	bg := context.Background()
	pool, err := openWithTimeout(bg, cfg)
	require.NoError(t, err)
	defer pool.Close()
	_, key, err := account.NewService(pool).Create(bg, "engage")
	require.NoError(t, err)
	for _, e := range []string{"ada@example.com", "bob@example.com"} {
		apiCall(t, base, key, http.MethodPost, "/v1/subscribers", map[string]any{"email": e, "status": "confirmed"})
	}
	tracked := apiCall(t, base, key, http.MethodPost, "/v1/campaigns", map[string]any{"name": "Sale", "from_email": "news@example.com",
		"subject": "Sale", "html_template": `<p><a href="https://shop.example/sale">Sale</a> <a href="https://shop.example/blog">Blog</a></p>`,
		"track_clicks": true, "track_opens": true})
	plain := apiCall(t, base, key, http.MethodPost, "/v1/campaigns", map[string]any{"name": "Untracked", "from_email": "news@example.com",
		"subject": "Plain", "html_template": `<p><a href="https://shop.example/">Shop</a></p>`, "track_clicks": false, "track_opens": false})
	for _, c := range []map[string]any{tracked, plain} {
		apiCall(t, base, key, http.MethodPost, fmt.Sprintf("/v1/campaigns/%v/approve", c["id"]), map[string]any{})
	}
	statusOf := func(c map[string]any) string {
		return fmt.Sprint(apiCall(t, base, key, http.MethodGet, fmt.Sprintf("/v1/campaigns/%v", c["id"]), nil)["status"])
	}
	require.Eventually(t, func() bool { return statusOf(tracked) == "sent" && statusOf(plain) == "sent" }, time.Minute, 100*time.Millisecond)

	// Ada's message, from the dev inbox: follow the sale link as a browser and as
	// curl, and fetch the open image.
	inbox := apiCall(t, base, key, http.MethodGet, "/v1/dev/inbox", nil)["data"].([]any)
	var html string
	for _, m := range inbox {
		m := m.(map[string]any)
		if m["to"] == "ada@example.com" && m["subject"] == "Sale" {
			html = rawGet(t, fmt.Sprintf("%s/v1/dev/inbox/%v/html", base, m["id"]), key, "")
		}
	}
	require.NotEmpty(t, html, "Ada's message is in the dev inbox")
	clickRe := regexp.MustCompile(`href="([^"]*/c/[^"]+)"[^>]*>Sale<`)
	openRe := regexp.MustCompile(`src="([^"]*/o/[^"]+)"`)
	require.Regexp(t, clickRe, html)
	require.Regexp(t, openRe, html)
	local := func(u string) string { // the links name the public URL; the test reaches the same server
		p, err := url.Parse(strings.ReplaceAll(u, "&amp;", "&"))
		require.NoError(t, err)
		return base + p.RequestURI()
	}
	click := local(clickRe.FindStringSubmatch(html)[1])
	rawGet(t, click, "", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36")
	rawGet(t, click, "", "curl/8.5.0")
	rawGet(t, local(openRe.FindStringSubmatch(html)[1]), "", "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0")
	clicksPath := fmt.Sprintf("/v1/campaigns/%v/clicks", tracked["id"])
	require.Eventually(t, func() bool { // hits are written in batches, a second or two later
		e := apiCall(t, base, key, http.MethodGet, clicksPath, nil)["engagement"].(map[string]any)
		return e["clicks"].(float64) == 2 && e["opens"].(float64) == 1
	}, time.Minute, 200*time.Millisecond)
	want := apiCall(t, base, key, http.MethodGet, clicksPath, nil)

	link, err := newLoginLink(bg, pool, "engage", base)
	require.NoError(t, err)
	b.navigate(link)
	b.wait(`!!document.querySelector('nav')`)
	b.eval(pageHelpers)
	b.eval(`window.h1 = () => (document.querySelector('main h1') || {}).textContent; true`)

	b.open(fmt.Sprintf("#/campaigns/%v", tracked["id"]), "Sale")
	b.wait(`!!document.querySelector('table.links tbody tr') && !!document.querySelector('table.engagement tr[data-kind=opens]')`)
	e := want["engagement"].(map[string]any)
	l := want["links"].([]any)[0].(map[string]any)
	require.Equal(t, "https://shop.example/sale", l["url"])
	for sel, v := range map[string]any{
		`table.engagement tr[data-kind=clicks] [data-total]`:        e["clicks"],
		`table.engagement tr[data-kind=clicks] [data-unique]`:       e["unique_clicks"],
		`table.engagement tr[data-kind=clicks] [data-human]`:        e["human_clicks"],
		`table.engagement tr[data-kind=opens] [data-total]`:         e["opens"],
		`table.engagement tr[data-kind=opens] [data-human]`:         e["human_opens"],
		`table.links tr[data-link="1"] [data-total]`:                l["total"],
		`table.links tr[data-link="1"] [data-human]`:                l["human"],
		`table.links tr[data-link="1"] [data-unique]`:               l["unique"],
		`table.links tr[data-link="1"] [data-bots]`:                 l["total"].(float64) - l["human"].(float64),
		`table.engagement tr[data-kind=clicks] [data-unique-human]`: e["unique_human_clicks"],
	} {
		require.Equal(t, fmt.Sprint(v), b.str(`document.querySelector('`+sel+`').textContent`), sel)
	}
	require.GreaterOrEqual(t, l["total"].(float64)-l["human"].(float64), 1.0, "curl's click is a suspected bot")
	require.Contains(t, b.str(`__t.text()`), "Apple Mail Privacy Protection")
	require.Contains(t, b.str(`document.querySelector('table.links').innerText`), "https://shop.example/sale")
	b.eval(`document.getElementById('engagement').scrollIntoView(); true`)
	b.audit("campaign-engagement")

	b.open(fmt.Sprintf("#/campaigns/%v", plain["id"]), "Untracked")
	b.wait(`!!document.getElementById('sends')`)
	require.Equal(t, "false", b.str(`String(!!document.getElementById('engagement'))`), "a campaign tracking nothing shows no engagement")

	// The domain check on the Senders page.
	b.open("#/senders", "Senders")
	b.wait(`__t.fill('From address or domain', 'news@localhost')`)
	b.eval(`__t.click('Check')`)
	b.wait(`__t.field('From address or domain').getAttribute('aria-invalid') === 'true'`)
	b.eval(`__t.fill('From address or domain', 'news@Good.com')`)
	b.eval(`__t.fill('DKIM selector', 'resend')`)
	b.eval(`__t.click('Check')`)
	b.wait(`!!document.querySelector('.domain-result[data-domain="good.com"][data-ok=yes]')`)
	for _, k := range []string{"spf", "dkim", "dmarc"} {
		require.Equal(t, "pass", b.str(`document.querySelector('[data-check=`+k+`]').dataset.status`), k)
	}
	require.Equal(t, "yes", b.str(`document.querySelector('[data-aligned]').dataset.aligned`))
	b.eval(`__t.fill('From address or domain', 'bad.com')`)
	b.eval(`__t.fill('DKIM selector', '')`)
	b.eval(`__t.click('Check')`)
	b.wait(`!!document.querySelector('.domain-result[data-domain="bad.com"][data-ok=no]') && document.querySelectorAll('table.publish tbody tr').length > 0`)
	check := apiCall(t, base, key, http.MethodPost, "/v1/domains/check", map[string]any{"domain": "bad.com"})
	require.Equal(t, fmt.Sprint(len(check["publish"].([]any))), b.str(`String(document.querySelectorAll('table.publish tbody tr').length)`))
	require.Equal(t, check["spf"].(map[string]any)["status"], b.str(`document.querySelector('[data-check=spf]').dataset.status`))
	// The alignments say what the API says, once each, in words (not "DKIM aligned: no"
	// above a raw dump saying "aligned yes"); each record to publish can be copied.
	yesNo := func(v any) string {
		if v == true {
			return "yes"
		}
		return "no"
	}
	require.Equal(t, yesNo(check["aligned"]), b.str(`document.querySelector('[data-aligned]').dataset.aligned`))
	for _, k := range []string{"spf", "dkim"} {
		require.Equal(t, yesNo(check[k+"_alignment"].(map[string]any)["aligned"]), b.str(`document.querySelector('[data-alignment=`+k+`]').dataset.value`), k)
	}
	require.Equal(t, "0", b.str(`String(document.querySelectorAll('[data-field=spf_alignment], [data-field=dkim_alignment]').length)`))
	require.Equal(t, fmt.Sprint(2*len(check["publish"].([]any))), b.str(`String(document.querySelectorAll('table.publish button').length)`))
	b.eval(`document.getElementById('domain-check').scrollIntoView(); true`)
	b.audit("domain-check")
	// A field the API may gain later (alignment details) is shown as it comes, not hidden.
	b.eval(`window.__fetch = window.fetch; window.fetch = async (u, o) => {
		const r = await window.__fetch(u, o);
		if (!String(u).endsWith('/v1/domains/check') || !r.ok) return r;
		const j = await r.json();
		j.alignment = { spf: 'relaxed', dkim: 'strict' };
		j.dkim.signing_domain = 'bad.com';
		return new Response(JSON.stringify(j), { status: r.status, headers: r.headers });
	}; true`)
	b.eval(`__t.click('Check')`)
	b.wait(`!!document.querySelector('[data-field=alignment]') && document.querySelector('[data-field=alignment]').innerText.includes('relaxed') && document.querySelector('[data-check=dkim] [data-field=signing_domain]').textContent === 'bad.com'`)
	b.eval(`window.fetch = window.__fetch; true`)
}

// rawGet answers a GET's body: with the key as a bearer token when given, with
// the user agent when given, and without following a redirect (a click answers one).
func rawGet(t *testing.T, u, key, ua string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("User-Agent", ua)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Less(t, resp.StatusCode, 400, "GET %s: %s", u, b)
	return string(b)
}

// localZone serves zone's TXT records on a loopback UDP port: the only resolver the
// service under test asks (SENDONCE_DNS_SERVER), so no lookup leaves the machine.
func localZone(t *testing.T, zone map[string][]string) string {
	t.Helper()
	return dnschecktest.Serve(t, zone, nil)
}
