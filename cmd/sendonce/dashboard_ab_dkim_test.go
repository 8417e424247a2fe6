package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
)

// TestDashboardABTest: on a draft's page an A/B test is set (test mode, a person
// chooses): a test group over 50 % is refused at its field and nothing is stored;
// then two variants are saved and the API has them. Approved, the campaign sends
// its test group and waits; its page shows the report per variant with the API's
// numbers and the significance in words, and "Choose as winner" (after the
// confirmation) makes B the winner: the rest gets it and the campaign is sent.
// axe-clean at each step.
func TestDashboardABTest(t *testing.T) {
	b, base, key, _ := signedIn(t, "abtest")
	b.eval(`window.confirm = () => true; true`)
	for i := range 20 {
		apiCall(t, base, key, http.MethodPost, "/v1/subscribers", map[string]any{"email": fmt.Sprintf("p%02d@example.com", i), "status": "confirmed"})
	}
	c := apiCall(t, base, key, http.MethodPost, "/v1/campaigns", map[string]any{"name": "Spring sale", "from_email": "news@example.com",
		"subject": "Spring", "html_template": `<p>Hello {{.Name}}</p>`, "text_template": "Hello", "track_clicks": false, "track_opens": false})
	id := fmt.Sprint(c["id"])

	b.open("#/campaigns/"+id, "Spring sale")
	b.wait(`__t.click('Set up an A/B test')`)
	b.wait(`__t.choose('Mode', 'Test: a test group first, then the winner to the rest')`)
	b.wait(`__t.fill('Test group', '90')`)
	b.eval(`__t.fill('Wait (minutes)', '60')`)
	b.eval(`__t.choose('Winner by', 'A person chooses')`)
	b.eval(`__t.fill('Variant A subject', 'Our spring sale')`)
	b.eval(`__t.fill('Variant B subject', '20% off until Sunday')`)
	b.eval(`__t.click('Save the A/B test')`)
	b.wait(`!!document.querySelector('.ab-test .field-error') && !!document.querySelector('.ab-test [data-pointer="/test_percent"]')`)
	require.Contains(t, b.str(`document.querySelector('.ab-test [data-pointer="/test_percent"]').innerText`), "Test group")
	b.audit("ab-test-refused")
	req, err := http.NewRequest(http.MethodGet, base+"/v1/campaigns/"+id+"/ab-test", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "a refused test is not stored")

	b.eval(`__t.fill('Test group', '50')`)
	b.eval(`__t.click('Save the A/B test')`)
	b.wait(`!document.querySelector('.ab-test .field-error') && __t.text().includes('A/B test saved.')`)
	ab := apiCall(t, base, key, http.MethodGet, "/v1/campaigns/"+id+"/ab-test", nil)
	require.Equal(t, "test", ab["mode"])
	require.EqualValues(t, 50, ab["test_percent"])
	require.EqualValues(t, 3600, ab["wait_seconds"])
	require.Equal(t, "manual", ab["metric"])
	vs := ab["variants"].([]any)
	require.Len(t, vs, 2)
	require.Equal(t, "Our spring sale", vs[0].(map[string]any)["subject"])
	require.Equal(t, "20% off until Sunday", vs[1].(map[string]any)["subject"])
	b.audit("ab-test-draft")

	// Approved: the test group goes out, the rest waits for a person's choice.
	apiCall(t, base, key, http.MethodPost, "/v1/campaigns/"+id+"/approve", map[string]any{})
	var report []any
	require.Eventually(t, func() bool {
		ab = apiCall(t, base, key, http.MethodGet, "/v1/campaigns/"+id+"/ab-test", nil)
		report, _ = ab["report"].([]any)
		var sent, recipients float64
		for _, r := range report {
			sent += r.(map[string]any)["sent"].(float64)
			recipients += r.(map[string]any)["recipients"].(float64)
		}
		return len(report) == 2 && sent > 0 && sent == recipients
	}, time.Minute, 200*time.Millisecond)
	b.open("#/campaigns", "Campaigns")
	b.open("#/campaigns/"+id, "Spring sale")
	b.wait(`document.querySelectorAll('.ab-report tbody tr').length === 2 && __t.text().includes('Choose as winner')`)
	for _, r := range report {
		r := r.(map[string]any)
		v := r["variant"].(string)
		row := fmt.Sprintf(`document.querySelector('.ab-report tr[data-variant=%s]')`, v)
		require.Equal(t, fmt.Sprint(r["recipients"]), b.str(row+`.dataset.recipients`), "variant %s recipients", v)
		require.Equal(t, fmt.Sprint(r["sent"]), b.str(row+`.dataset.sent`), "variant %s sent", v)
		words := b.str(row + `.innerText`)
		switch {
		case r["leader"] == true:
			require.Contains(t, words, "leader")
		case r["p_value"].(float64) >= 0.05:
			require.Contains(t, words, "not yet significant")
		default:
			require.Contains(t, words, "significant (p = ")
		}
	}
	b.audit("ab-test-report")

	b.eval(`document.querySelector('[aria-label="Choose variant B as winner"]').click(); true`)
	b.wait(`!__t.text().includes('Choose as winner') && !!document.querySelector('[data-winner=B]')`)
	require.Equal(t, "B", apiCall(t, base, key, http.MethodGet, "/v1/campaigns/"+id+"/ab-test", nil)["winner"])
	require.Eventually(t, func() bool {
		return apiCall(t, base, key, http.MethodGet, "/v1/campaigns/"+id, nil)["status"] == "sent"
	}, time.Minute, 200*time.Millisecond)
	b.audit("ab-test-winner")
}

// TestDashboardDKIMKeys: the domain check (against a local DNS zone) lists the
// domain's DKIM keys; "Generate key" (Ed25519) adds one whose TXT record (name and
// value, as the API answers them) is shown and copyable, unpublished ("missing"
// once checked again); Activate (after the confirmation) makes it the active key;
// deleting the active key shows the API's 409 and keeps it. axe-clean.
func TestDashboardDKIMKeys(t *testing.T) {
	bin, axe := chromiumPath(t), axeScript(t)
	dnsAddr := localZone(t, map[string][]string{
		"good.com.":        {"v=spf1 ip4:192.0.2.1 ~all"},
		"_dmarc.good.com.": {"v=DMARC1; p=none"},
	})
	base, cfg := pagesService(t, func(c *config.Config) { c.DNSServer = dnsAddr }, manyInFlight)
	b := newPagesBrowser(t, bin, axe)
	bg := context.Background()
	pool, err := openWithTimeout(bg, cfg)
	require.NoError(t, err)
	defer pool.Close()
	_, key, err := account.NewService(pool).Create(bg, "dkim")
	require.NoError(t, err)
	link, err := newLoginLink(bg, pool, "dkim", base)
	require.NoError(t, err)
	b.navigate(link)
	b.wait(`!!document.querySelector('nav')`)
	b.eval(pageHelpers)
	b.eval(`window.confirm = () => true; window.__copied = ''; navigator.clipboard.writeText = (s) => { window.__copied = s; return Promise.resolve(); }; true`)

	b.open("#/senders", "Senders")
	check := func() {
		b.eval(`__t.fill('From address or domain', 'news@good.com')`)
		b.eval(`__t.click('Check')`)
		b.wait(`!!document.querySelector('.domain-result[data-domain="good.com"]') && !!document.querySelector('.dkim-keys')`)
	}
	check()
	b.wait(`__t.text().includes('No keys for this domain yet.')`)
	b.wait(`__t.choose('Algorithm', 'Ed25519 (fewer receivers verify it)')`)
	b.eval(`__t.click('Generate key')`)
	b.wait(`document.querySelectorAll('.dkim-keys tr[data-dkim-key]').length === 1`)
	keys := apiCall(t, base, key, http.MethodGet, "/v1/domains/good.com/dkim-keys", nil)["data"].([]any)
	require.Len(t, keys, 1)
	k := keys[0].(map[string]any)
	require.Equal(t, "ed25519", k["algorithm"])
	rec := k["record"].(map[string]any)
	require.Equal(t, rec["name"], b.str(`document.querySelector('.dkim-keys [data-record-name]').textContent`))
	require.Equal(t, rec["value"], b.str(`document.querySelector('.dkim-keys [data-record-value]').textContent`))
	b.eval(fmt.Sprintf(`document.querySelector('[aria-label="Copy the record value of key %s"]').click(); true`, k["selector"]))
	b.wait(`window.__copied !== ''`)
	require.Equal(t, rec["value"], b.str(`window.__copied`))
	b.audit("dkim-generated")

	// Checked again: the key is not published yet.
	check()
	b.wait(fmt.Sprintf(`(document.querySelector('tr[data-dkim-key=%q]') || {dataset: {}}).dataset.published === 'missing'`, k["selector"]))

	b.eval(fmt.Sprintf(`document.querySelector('[aria-label="Activate key %s"]').click(); true`, k["selector"]))
	b.wait(fmt.Sprintf(`(document.querySelector('tr[data-dkim-key=%q]') || {dataset: {}}).dataset.active === 'yes'`, k["selector"]))
	require.Equal(t, true, apiCall(t, base, key, http.MethodGet, "/v1/domains/good.com/dkim-keys", nil)["data"].([]any)[0].(map[string]any)["active"])

	b.eval(fmt.Sprintf(`document.querySelector('[aria-label="Delete key %s"]').click(); true`, k["selector"]))
	b.wait(`!!document.querySelector('.dkim-keys .error')`)
	require.True(t, strings.TrimSpace(b.str(`document.querySelector('.dkim-keys .error').innerText`)) != "")
	require.Len(t, apiCall(t, base, key, http.MethodGet, "/v1/domains/good.com/dkim-keys", nil)["data"].([]any), 1, "the active key is kept")
	b.audit("dkim-active")
}
