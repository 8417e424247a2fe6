package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/event"
)

// TestDashboardProduct drives, in headless Chromium on one fresh database, what a
// person trying the dashboard found wrong, each in a subtest that stands alone (run
// one with -run 'TestDashboardProduct/name'): approving asks first with what will go
// out; a draft is edited in full; an import says what status its rows get, and the
// campaign form why its audience is smaller than its lists; an id that is not a
// number is a page not found, with no request loop; a campaign settled in one
// moment charts a sane time range; the sends table follows the progress; the recent
// bounces, complaints and opt-outs are the newest; campaigns page past 200, newest
// first, and subscribers show their total; no page scrolls sideways on a phone.
// Any JavaScript error fails it, and so does an axe-core violation of impact serious
// or critical on a page audited.
func TestDashboardProduct(t *testing.T) {
	bin, axe := chromiumPath(t), axeScript(t)
	base, cfg := pagesService(t, manyInFlight)
	b := newPagesBrowserFor(t, bin, axe, 15*time.Minute)
	b.within = 20 * time.Second
	bg := context.Background()
	pool, err := openWithTimeout(bg, cfg)
	require.NoError(t, err)
	defer pool.Close()
	acct, key, err := account.NewService(pool).Create(bg, "product")
	require.NoError(t, err)
	link, err := newLoginLink(bg, pool, "product", base)
	require.NoError(t, err)
	b.navigate(link)
	b.wait(`!!document.querySelector('nav')`)
	b.eval(pageHelpers)
	b.eval(`window.confirm = () => true; window.h1 = () => (document.querySelector('main h1') || {}).textContent; true`)

	call := func(method, path string, body any) map[string]any { return apiCall(t, base, key, method, path, body) }
	// audienceOf makes a list of n confirmed subscribers (prefix1@…, prefix2@…).
	audienceOf := func(prefix string, n int) float64 {
		l := call(http.MethodPost, "/v1/lists", map[string]any{"name": prefix})
		var rows []map[string]any
		for i := range n {
			rows = append(rows, map[string]any{"email": fmt.Sprintf("%s%d@example.com", prefix, i+1), "status": "confirmed"})
		}
		importJSON(t, base, key, fmt.Sprintf("/v1/subscribers/import?list_id=%v", l["id"]), rows)
		return l["id"].(float64)
	}
	draft := func(name string, list float64, extra map[string]any) string {
		body := map[string]any{"name": name, "from_email": "news@example.com", "subject": "Big news",
			"text_template": "Hello {{.Name}}", "list_ids": []float64{list}}
		for k, v := range extra {
			body[k] = v
		}
		return fmt.Sprint(call(http.MethodPost, "/v1/campaigns", body)["id"])
	}
	statusOf := func(id string) string { return fmt.Sprint(call(http.MethodGet, "/v1/campaigns/"+id, nil)["status"]) }
	// within runs a subtest with the browser's failures reported to it.
	within := func(name string, fn func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			parent := b.t
			b.t = t
			defer func() { b.t = parent }()
			fn(t)
		})
	}

	within("approve_asks_first", func(t *testing.T) {
		list := audienceOf("approve", 3)
		id := draft("approve me", list, map[string]any{"track_opens": true})
		b.open("#/campaigns/"+id, "approve me")
		b.eval(`__t.click('Approve and send now')`)
		b.wait(`!!document.querySelector('dialog[open]') && document.querySelector('[data-approve-audience]').dataset.approveAudience === '3'`)
		require.Equal(t, "draft", statusOf(id), "nothing is approved before the confirmation")
		summary := b.str(`document.querySelector('dialog[open]').innerText`)
		for _, want := range []string{"3 subscribers", "Big news", "news@example.com", "clicks tracked", "opens tracked", "now", "deployment's provider"} {
			require.Contains(t, summary, want)
		}
		b.audit("approve-dialog")
		b.eval(`__t.click('Keep as draft')`)
		// Gone, not only closed: its close event (which unmounts it) is dispatched after
		// close() returns, and a click before it reopened a dialog that event then shut.
		b.wait(`!document.querySelector('dialog.confirm')`)
		require.Equal(t, "draft", statusOf(id))
		b.eval(`__t.click('Approve and send now')`)
		b.wait(`!!document.querySelector('dialog[open]') && !!__t.click('Approve and send')`)
		b.wait(`!document.querySelector('dialog[open]') && !document.querySelector('[data-status=draft]')`)
		require.NotEqual(t, "draft", statusOf(id))
	})

	within("draft_edited_in_full", func(t *testing.T) {
		list := audienceOf("edit", 1)
		snd := call(http.MethodPost, "/v1/senders", map[string]any{"name": "edit sender", "type": "http",
			"settings": map[string]any{"url": "http://127.0.0.1:9/send"}})
		id := draft("edit me", list, nil)
		b.open("#/campaigns/"+id, "edit me")
		b.eval(`__t.click('Edit draft')`)
		b.wait(`!!__t.field('Reply-To')`)
		b.eval(`__t.fill('Subject', 'Edited subject')`)
		b.eval(`__t.fill('Reply-To', 'replies@example.com')`)
		b.eval(`__t.fill('Language', 'fr')`)
		b.wait(`__t.choose('Sender', 'edit sender')`)
		b.eval(`const box = (t) => [...document.querySelectorAll('label.check')].find((l) => l.textContent.includes(t)).querySelector('input');
			box('Track clicks').click(); box('Track opens').click(); box('web archive').click(); box('Send only on these days').click(); true`)
		b.wait(`!!__t.field('Time zone')`)
		b.eval(`__t.fill('Time zone', 'Europe/Paris')`)
		b.eval(`[...document.querySelectorAll('label.check')].find((l) => l.textContent.trim() === 'Fri').querySelector('input').click(); true`)
		b.audit("campaign-edit")
		b.eval(`__t.click('Save draft')`)
		b.wait(`!__t.field('Reply-To') && __t.text().includes('Edit draft')`)
		c := call(http.MethodGet, "/v1/campaigns/"+id, nil)
		require.Equal(t, "Edited subject", c["subject"])
		require.Equal(t, "replies@example.com", c["reply_to"])
		require.Equal(t, "fr", c["language"])
		require.Equal(t, snd["id"], c["sender_id"])
		require.Equal(t, false, c["track_clicks"])
		require.Equal(t, true, c["track_opens"])
		require.Equal(t, true, c["archive"])
		require.Equal(t, map[string]any{"days": []any{"mon", "tue", "wed", "thu"}, "start": "09:00", "end": "17:00",
			"time_zone": "Europe/Paris"}, c["send_window"])
		b.wait(`(document.querySelector('[data-send-window]') || {textContent: ''}).textContent.includes('Mon, Tue, Wed, Thu 09:00–17:00 (Europe/Paris)')`)
	})

	within("import_status_and_audience_explained", func(t *testing.T) {
		call(http.MethodPost, "/v1/lists", map[string]any{"name": "imported"})
		dir := t.TempDir()
		csv := func(name, body string) string {
			p := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
			return p
		}
		b.open("#/subscribers", "Subscribers")
		b.wait(`!!document.querySelector('[data-consent-note]') && __t.field('Status of rows without one').value === 'confirmed'`)
		b.wait(`__t.choose('Also add to list', 'imported')`)
		require.NoError(t, chromedp.Do(b.ctx, chromedp.SetUploadFiles(chromedp.CSS(`input[type=file]`), []string{csv("a.csv", "email,name\nimp1@example.com,One\nimp2@example.com,Two\n")})))
		b.eval(`__t.click('Import')`)
		b.wait(`!!document.querySelector('[data-import=done]')`)
		b.wait(`__t.choose('Status of rows without one', 'pending: not confirmed, no campaign reaches them')`)
		b.wait(`__t.choose('Also add to list', 'imported')`)
		require.NoError(t, chromedp.Do(b.ctx, chromedp.SetUploadFiles(chromedp.CSS(`input[type=file]`), []string{csv("b.csv", "email\nimp3@example.com\n")})))
		b.eval(`__t.click('Import')`)
		b.wait(`__t.text().includes('(new ones pending)')`)
		require.EqualValues(t, 2, call(http.MethodGet, "/v1/subscribers/count?status=confirmed&email=imp", nil)["count"])
		require.EqualValues(t, 1, call(http.MethodGet, "/v1/subscribers/count?status=pending&email=imp", nil)["count"])
		b.audit("subscribers-import-status")
		b.open("#/campaigns/new", "New campaign")
		b.wait(`[...document.querySelectorAll('label.check')].some((l) => l.textContent.includes('imported (3 members)'))`)
		b.eval(`[...document.querySelectorAll('label.check')].find((l) => l.textContent.includes('imported')).querySelector('input').click(); true`)
		b.wait(`document.querySelector('[data-audience]').dataset.audience === '2' && !!document.querySelector('[data-audience-note]')`)
		require.Contains(t, b.str(`document.querySelector('[data-audience-note]').textContent`), "1 subscriber is pending")
	})

	within("bad_ids_not_found", func(t *testing.T) {
		for _, hash := range []string{"#/subscribers/abc", "#/lists/xyz", "#/campaigns/1e3", "#/segments/abc", "#/team/xyz", "#/nowhere"} {
			b.eval(`performance.clearResourceTimings(); location.hash = '#/overview'; true`)
			b.wait(`h1() === 'Overview'`)
			b.eval(fmt.Sprintf(`location.hash = %q; true`, hash))
			time.Sleep(time.Second)
			asked := b.str(`String(performance.getEntriesByType('resource').filter((e) => /NaN|\/abc|\/xyz|1e3/.test(e.name)).length)`)
			require.Equal(t, "0", asked, "%s asks the API nothing", hash)
			b.wait(`h1() === 'Not found'`)
		}
		b.audit("not-found")
	})

	within("chart_of_one_moment", func(t *testing.T) {
		list := audienceOf("moment", 2)
		id := draft("one moment", list, nil)
		call(http.MethodPost, "/v1/campaigns/"+id+"/approve", map[string]any{})
		require.Eventually(t, func() bool { return statusOf(id) == "sent" }, 30*time.Second, 100*time.Millisecond)
		b.open("#/campaigns/"+id, "one moment")
		b.wait(`Number((document.querySelector('figure.chart') || {dataset: {}}).dataset.points) > 0 && !!document.querySelector('figure.chart').dataset.xMax`)
		span := b.str(`String(Number(document.querySelector('figure.chart').dataset.xMax) - Number(document.querySelector('figure.chart').dataset.xMin))`)
		points := b.str(`document.querySelector('figure.chart').dataset.points`)
		t.Logf("points %s, x range %s s", points, span)
		var s float64
		_, err := fmt.Sscan(span, &s)
		require.NoError(t, err)
		require.Greater(t, s, 0.0)
		require.LessOrEqual(t, s, 3600.0, "a campaign that settled within moments is drawn over at most an hour, not years")
	})

	within("sends_follow_progress", func(t *testing.T) {
		list := audienceOf("follow", 3)
		id := draft("follow me", list, nil)
		call(http.MethodPost, "/v1/campaigns/"+id+"/approve", map[string]any{"scheduled_for": time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339)})
		b.open("#/campaigns/"+id, "follow me")
		b.wait(`!!document.querySelector('[data-status=approved]')`)
		b.wait(`document.querySelectorAll('table.sends tbody tr').length === 3 && [...document.querySelectorAll('table.sends tbody tr .tag')].every((e) => e.textContent === 'sent')`)
	})

	within("report_export_and_retry_failed", func(t *testing.T) {
		// An HTTP sender whose server refuses one recipient (400: a permanent
		// failure) until it is told to take it.
		var refuse atomic.Bool
		refuse.Store(true)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if refuse.Load() && bytes.Contains(body, []byte("report2@example.com")) {
				http.Error(w, `{"error":"recipient refused"}`, http.StatusBadRequest)
				return
			}
			_, _ = io.WriteString(w, `{"id":"accepted"}`)
		}))
		defer srv.Close()
		list := audienceOf("report", 3)
		snd := call(http.MethodPost, "/v1/senders", map[string]any{"name": "report sender", "type": "http",
			"settings": map[string]any{"url": srv.URL + "/send"}})
		id := draft("report me", list, map[string]any{"sender_id": snd["id"]})
		call(http.MethodPost, "/v1/campaigns/"+id+"/approve", map[string]any{})
		require.Eventually(t, func() bool { return statusOf(id) == "sent" }, time.Minute, 100*time.Millisecond)

		b.open("#/campaigns/"+id, "report me")
		fact := func(name string) string {
			return fmt.Sprintf(`(document.querySelector('[data-fact=%s]') || {}).textContent`, name)
		}
		b.wait(fact("sent") + ` === '2' && ` + fact("failed") + ` === '1' && ` + fact("audience") + ` === '3'`)
		b.wait(`[...document.querySelectorAll('[data-report] tbody th')].some((th) => th.textContent === 'example.com')`)
		require.Contains(t, b.str(`document.querySelector('[data-report]').innerText`), "sent (the provider reports no deliveries)",
			"the rates say what they are against")
		// The export link downloads the recipients with the session's cookie.
		csv, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`fetch(document.querySelector('[data-report] a[download]').href).then((r) => r.text())`, chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(csv), "\n")
		require.Len(t, lines, 4, "a header and the three recipients: %s", csv)
		require.True(t, strings.HasPrefix(lines[0], "send_id,"), csv)
		require.Contains(t, csv, "report2@example.com")

		// Retry: the confirmation (window.confirm answers yes here) and the failed
		// recipient sent once more; the button goes with the failure.
		refuse.Store(false)
		b.eval(`__t.click('Retry 1 failed')`)
		b.wait(fact("sent") + ` === '3' && ` + fact("failed") + ` === '0'`)
		require.Eventually(t, func() bool { return statusOf(id) == "sent" }, time.Minute, 100*time.Millisecond)
		b.wait(`![...document.querySelectorAll('[data-report] button')].some((x) => x.textContent.startsWith('Retry'))`)
		b.audit("campaign-report")
	})

	within("recent_feedback_is_newest", func(t *testing.T) {
		// 105 opt-outs, as a provider's webhook records them, each in its own transaction.
		for i := range 105 {
			require.NoError(t, event.Emit(bg, pool, acct.ID, event.SubscriberUnsubscribed, map[string]any{"email": fmt.Sprintf("fb%03d@example.com", i)}))
		}
		require.Eventually(t, func() bool {
			ev := call(http.MethodGet, "/v1/events?type=subscriber.unsubscribed&order=newest&limit=1", nil)["data"].([]any)
			return len(ev) == 1 && strings.Contains(fmt.Sprint(ev[0]), "fb104@example.com")
		}, 20*time.Second, 100*time.Millisecond)
		b.open("#/overview", "Overview")
		b.wait(`!!document.querySelector('ul.feedback li') && document.querySelector('ul.feedback li').textContent.includes('fb104@example.com')`)
		require.Equal(t, "10", b.str(`String(document.querySelectorAll('ul.feedback li').length)`))
	})

	within("campaigns_page_newest_first_and_subscribers_total", func(t *testing.T) {
		list := audienceOf("many", 1)
		for i := range 205 {
			draft(fmt.Sprintf("many-%03d", i), list, nil)
		}
		b.open("#/campaigns", "Campaigns")
		// The campaign made last comes first (waited for: the first rows drawn may
		// be an earlier listing's while the page's own request is under way).
		b.wait(`!!document.querySelector('main table tbody tr a') && document.querySelector('main table tbody tr a').textContent === 'many-204'`)
		b.eval(`__t.click('Next page')`)
		b.wait(`document.querySelector('main table tbody tr a').textContent === 'many-154'`)
		b.audit("campaigns-paged")
		var rows []map[string]any
		for i := range 60 {
			rows = append(rows, map[string]any{"email": fmt.Sprintf("page%02d@example.com", i), "status": "confirmed"})
		}
		importJSON(t, base, key, "/v1/subscribers/import", rows)
		total := fmt.Sprint(call(http.MethodGet, "/v1/subscribers/count", nil)["count"])
		b.open("#/subscribers", "Subscribers")
		b.wait(fmt.Sprintf(`(document.querySelector('[data-total]') || {dataset: {}}).dataset.total === %q`, total))
		require.Contains(t, b.str(`document.querySelector('[data-total]').textContent`), total+" subscribers")
		// The total and the first page are two requests: the pager comes with the page.
		b.wait(`__t.click('Next page')`)
		b.wait(`__t.text().includes('Page 2')`)
	})

	within("no_sideways_scroll_on_a_phone", func(t *testing.T) {
		list := audienceOf("phone", 1)
		id := draft("phone", list, nil)
		sub := call(http.MethodGet, "/v1/subscribers?email=phone1", nil)["data"].([]any)[0].(map[string]any)["id"]
		require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844)))
		defer func() { require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900))) }()
		var wide []string
		for _, hash := range []string{"#/overview", "#/campaigns", "#/campaigns/new", "#/campaigns/" + id, "#/sequences", "#/sequences/new",
			"#/subscribers", fmt.Sprintf("#/subscribers/%v", sub), "#/lists", fmt.Sprintf("#/lists/%v", list), "#/templates", "#/segments",
			"#/suppressions", "#/messages", "#/senders", "#/endpoints", "#/inbox", "#/keys", "#/nowhere"} {
			b.eval(fmt.Sprintf(`location.hash = %q; true`, hash))
			b.wait(`!!h1() && !document.querySelector('main .loading')`)
			time.Sleep(700 * time.Millisecond) // the page's tables arrive
			w := b.str(`document.scrollingElement.scrollWidth + ' > ' + innerWidth`)
			var sw, iw int
			_, err := fmt.Sscanf(w, "%d > %d", &sw, &iw)
			require.NoError(t, err)
			if sw > iw {
				wide = append(wide, hash+": "+w)
			}
		}
		require.Empty(t, wide, "pages that scroll sideways at 390 px")
		b.open("#/subscribers", "Subscribers")
		b.audit("subscribers-phone")
	})

	within("sender_health_is_true", func(t *testing.T) {
		snd := call(http.MethodPost, "/v1/senders", map[string]any{"name": "health sender", "type": "http",
			"settings": map[string]any{"url": "http://127.0.0.1:9/send"}})
		b.open(fmt.Sprintf("#/senders/%v", snd["id"]), "health sender")
		b.eval(`__t.click('Verify credentials')`)
		b.wait(`!!document.querySelector('[data-verify]')`)
		require.Equal(t, "unverifiable", b.str(`document.querySelector('[data-verify]').dataset.verify`), "an http sender cannot be verified: no red failure")
		require.Equal(t, "0", b.str(`String(document.querySelectorAll('main .error').length)`))
		b.open("#/overview", "Overview")
		b.wait(`!!document.querySelector('[data-senders-paused]')`)
		require.NotContains(t, b.str(`__t.text()`), "are active", "the overview claims nothing it does not know")
	})

	within("errors_say_where", func(t *testing.T) {
		list := audienceOf("errs", 1)
		id := draft("errors", list, nil)
		b.open("#/campaigns/"+id, "errors")
		b.eval(`__t.fill('To (up to 10', 'a@example.com, not-an-address, c@example.com')`)
		b.eval(`__t.click('Send test')`)
		b.wait(`!!document.querySelector('main .error')`)
		box := b.str(`document.querySelector('main .error').innerText`)
		require.Contains(t, box, "address 2 (not-an-address)", "the refused address is named")
		require.NotContains(t, box, "marked below")
		b.wait(`document.activeElement === document.querySelector('main .error')`)
	})

	within("templates_sample_delete_clone", func(t *testing.T) {
		b.open("#/templates", "Templates")
		b.eval(`__t.click('New template')`)
		b.wait(`!!__t.field('Sample data')`)
		b.eval(`__t.fill('Name', 'tpl-17')`)
		b.eval(`__t.fill('Subject', 'Hi {{.Attributes.plan}}')`)
		b.eval(`__t.fill('Text', 'Your plan: {{.Attributes.plan}}')`)
		b.eval(`__t.fill('Sample data', '{"plan": "gold"}')`)
		b.wait(`!!document.querySelector('[data-rendered]') && document.querySelector('[data-rendered]').innerText.includes('Hi gold')`)
		b.eval(`__t.click('Create and preview')`)
		b.wait(`document.querySelector('#editor').textContent === 'Edit tpl-17'`)
		b.wait(`!!document.querySelector('[aria-label="Clone tpl-17"]')`)
		b.eval(`document.querySelector('[aria-label="Clone tpl-17"]').click(); true`)
		b.wait(`__t.field('Name').value === 'Copy of tpl-17' && __t.field('Sample data').value.includes('gold')`)
		b.eval(`__t.click('Create and preview')`)
		b.wait(`!!document.querySelector('[aria-label="Delete Copy of tpl-17"]')`)
		b.audit("templates-clone")
		b.eval(`document.querySelector('[aria-label="Delete Copy of tpl-17"]').click(); true`)
		b.wait(`!document.querySelector('[aria-label="Delete Copy of tpl-17"]')`)
		names := fmt.Sprint(call(http.MethodGet, "/v1/templates?limit=500", nil)["data"])
		require.Contains(t, names, "tpl-17")
		require.NotContains(t, names, "Copy of tpl-17")
	})

	within("text_spacing_plurals_times", func(t *testing.T) {
		audienceOf("solo", 1)
		dir := t.TempDir()
		p := filepath.Join(dir, "bad.csv")
		require.NoError(t, os.WriteFile(p, []byte("email\nnot an address\n"), 0o600))
		b.open("#/subscribers", "Subscribers")
		b.wait(`__t.text().includes('solo: 1 member')`)
		require.NotContains(t, b.str(`__t.text()`), "1 members")
		require.NoError(t, chromedp.Do(b.ctx, chromedp.SetUploadFiles(chromedp.CSS(`input[type=file]`), []string{p})))
		b.eval(`__t.click('Import')`)
		b.wait(`!!document.querySelector('[data-import=done]')`)
		require.Contains(t, b.str(`document.querySelector('[data-import=done] p').innerText`), "0 updated, 1 rejected")
		b.wait(`!!document.querySelector('main time[title]')`)
		require.Contains(t, b.str(`document.querySelector('footer').innerText`), "time zone")
	})

	within("messages_newest_with_subject", func(t *testing.T) {
		for i := range 3 {
			sendMessage(t, base, key, fmt.Sprintf("order-%d", i), map[string]any{"to": "ada@example.com", "from": "shop@example.com",
				"subject": fmt.Sprintf("Receipt %d", i), "text": "Thanks"})
		}
		b.open("#/messages", "Messages")
		b.wait(`!!document.querySelector('table.messages-log tbody tr')`)
		require.Contains(t, b.str(`document.querySelector('table.messages-log tbody tr').innerText`), "Receipt 2", "the newest first, with its subject")
		b.eval(`document.querySelector('table.messages-log tbody tr a').click(); true`)
		b.wait(`!!document.querySelector('[data-subject]')`)
		require.Equal(t, "Receipt 2", b.str(`document.querySelector('[data-subject]').textContent`))
	})

	within("public_list_sign_up_form", func(t *testing.T) {
		l := call(http.MethodPost, "/v1/lists", map[string]any{"name": "newsletter"})
		call(http.MethodPatch, fmt.Sprintf("/v1/lists/%v", l["id"]), map[string]any{"public": true, "optin_from_email": "news@example.com"})
		b.open(fmt.Sprintf("#/lists/%v", l["id"]), "newsletter")
		b.wait(`!!document.querySelector('[data-signup-url]') && !!document.querySelector('[data-signup-embed]')`)
		url := b.str(`document.querySelector('[data-signup-url]').value`)
		pub := fmt.Sprint(call(http.MethodGet, "/v1/account", nil)["public_id"])
		require.Equal(t, base+"/p/"+pub+"/subscribe", url)
		embed := b.str(`document.querySelector('[data-signup-embed]').value`)
		require.Contains(t, embed, fmt.Sprintf(`name="list_ids" value="%v"`, l["id"]))
		b.audit("list-signup-form")
		// The form as a web site would post it.
		resp, err := http.PostForm(url, map[string][]string{"email": {"signed@example.com"}, "list_ids": {fmt.Sprint(l["id"])}})
		require.NoError(t, err)
		resp.Body.Close()
		require.Less(t, resp.StatusCode, 400)
		require.EqualValues(t, 1, call(http.MethodGet, fmt.Sprintf("/v1/subscribers/count?list_id=%v&membership=any", l["id"]), nil)["count"])
	})

	within("one_event_stream_at_a_time", func(t *testing.T) {
		list := audienceOf("stream", 1)
		id := draft("stream", list, nil)
		call(http.MethodPost, "/v1/campaigns/"+id+"/approve", map[string]any{})
		b.open("#/templates", "Templates") // no page listening: the stream is closed
		b.eval(`performance.clearResourceTimings(); true`)
		b.open("#/campaigns/"+id, "stream") // its progress, chart and events all listen at once
		time.Sleep(2 * time.Second)
		require.Equal(t, "1", b.str(`String(performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/events/stream-tokens')).length)`),
			"one stream is opened for every listener of the page (each more would hold a connection until none is left)")
	})

	within("subscriber_suppression_and_status", func(t *testing.T) {
		audienceOf("quit", 1)
		call(http.MethodPost, "/v1/suppressions", map[string]any{"email": "quit1@example.com", "reason": "unsubscribe", "source": "one-click"})
		sub := call(http.MethodGet, "/v1/subscribers?email=quit1", nil)["data"].([]any)[0].(map[string]any)
		require.Equal(t, "unsubscribed", sub["status"])
		b.open(fmt.Sprintf("#/subscribers/%v", sub["id"]), "quit1@example.com")
		b.wait(`!!document.querySelector('[data-suppressed]') && document.querySelector('[data-suppressed]').dataset.suppressed === 'unsubscribe'`)
		require.Contains(t, b.str(`document.querySelector('[data-suppressed]').textContent`), "one-click")
		b.wait(`!!document.querySelector('[data-gets-nothing]')`)
		// Setting the status back to confirmed asks first; declining sends nothing.
		b.eval(`window.__asked = ''; window.confirm = (m) => { window.__asked = m; return false; }; __t.fill('Status', 'confirmed')`)
		b.wait(`__t.field('Status').value === 'confirmed'`)
		b.eval(`__t.click('Save subscriber')`)
		b.wait(`window.__asked.includes('unsubscribed')`)
		b.eval(`window.confirm = () => true; true`)
		require.Equal(t, "unsubscribed", call(http.MethodGet, fmt.Sprintf("/v1/subscribers/%v", sub["id"]), nil)["status"])
		b.audit("subscriber-suppressed")
	})

	within("segments_errors_edit_lists_members", func(t *testing.T) {
		list := audienceOf("segA", 2)
		audienceOf("segB", 1)
		b.open("#/segments", "Segments")
		// A predicate the parser refuses is said in words, with where.
		b.eval(`__t.fill('Match', '$.plan = "pro"')`)
		b.wait(`!!document.querySelector('.field-error') && document.querySelector('.field-error').textContent.includes('unexpected "=" at character 8')`)
		require.NotContains(t, b.str(`document.querySelector('.field-error').textContent`), "jsonpath input")
		// Restricted to a list: the live count is the list's.
		b.eval(`__t.fill('Match', '')`)
		b.wait(`[...document.querySelectorAll('label.check')].some((l) => l.textContent.trim() === 'segA')`)
		b.eval(`[...document.querySelectorAll('label.check')].find((l) => l.textContent.trim() === 'segA').querySelector('input').click(); true`)
		b.wait(`document.querySelector('[data-count]').dataset.count === '2'`)
		b.eval(`__t.fill('Name', 'in segA')`)
		b.eval(`__t.click('Save segment')`)
		b.wait(`!!document.querySelector('[aria-label="Edit segment in segA"]')`)
		// Edited: the form takes the segment, saving puts it back changed.
		b.eval(`document.querySelector('[aria-label="Edit segment in segA"]').click(); true`)
		b.wait(`__t.field('Name').value === 'in segA' && __t.text().includes('Edit in segA')`)
		b.eval(`__t.fill('Name', 'in segA, edited')`)
		b.eval(`__t.click('Save changes')`)
		b.wait(`!!document.querySelector('[aria-label="Edit segment in segA, edited"]')`)
		segs := call(http.MethodGet, "/v1/segments?limit=100", nil)["data"].([]any)
		var seg map[string]any
		for _, x := range segs {
			if x.(map[string]any)["name"] == "in segA, edited" {
				seg = x.(map[string]any)
			}
		}
		require.NotNil(t, seg, "the segment is renamed, not copied: %v", segs)
		require.Len(t, segs, 1)
		require.Equal(t, []any{list}, seg["list_ids"])
		b.audit("segments-edit")
		// Opened: its members.
		b.eval(`[...document.querySelectorAll('table.segments a')].find((a) => a.textContent === 'in segA, edited').click(); true`)
		// The count and the first page are two answers: wait for both.
		b.wait(`h1() === 'in segA, edited' && !!document.querySelector('[data-members]') && !!document.querySelector('table.segment-members')`)
		require.Equal(t, "2", b.str(`document.querySelector('[data-members]').dataset.members`))
		members := b.str(`document.querySelector('table.segment-members').innerText`)
		require.Contains(t, members, "segA1@example.com")
		require.NotContains(t, members, "segB1@example.com")
		b.audit("segment-members")
	})

	within("segments_engagement", func(t *testing.T) {
		list := audienceOf("segE", 2)
		first := draft("Engaged source", list, nil)
		b.open("#/segments", "Segments")
		b.eval(`__t.choose('Condition', 'Received and did not open')`)
		b.wait(`!!__t.field('Campaign') && [...__t.field('Campaign').options].some((o) => o.textContent === 'Engaged source')`)
		b.eval(`__t.choose('Campaign', 'Engaged source')`)
		// A draft was sent to nobody: nobody received it, so nobody is a non-opener.
		b.wait(`document.querySelector('[data-count]').dataset.count === '0'`)
		b.eval(`[...document.querySelectorAll('label.check')].find((l) => l.textContent.trim().startsWith('People only')).querySelector('input').checked`)
		b.audit("segments-engagement")
		b.eval(`__t.fill('Name', 'non-openers')`)
		b.eval(`__t.click('Save segment')`)
		b.wait(`!!document.querySelector('[aria-label="Edit segment non-openers"]')`)
		var seg map[string]any
		for _, x := range call(http.MethodGet, "/v1/segments?limit=100", nil)["data"].([]any) {
			if x.(map[string]any)["name"] == "non-openers" {
				seg = x.(map[string]any)
			}
		}
		require.NotNil(t, seg)
		eng, _ := seg["engagement"].(map[string]any)
		require.Equal(t, map[string]any{"kind": "opened", "negated": true, "campaign_id": eng["campaign_id"], "people_only": true}, eng)
		require.Equal(t, first, fmt.Sprint(eng["campaign_id"]))
		b.eval(`[...document.querySelectorAll('table.segments a')].find((a) => a.textContent === 'non-openers').click(); true`)
		b.wait(`!!document.querySelector('[data-engagement]') && document.querySelector('[data-engagement]').textContent.includes('Engaged source')`)
		require.Equal(t, "received Engaged source and did not open (people only)", b.str(`document.querySelector('[data-engagement]').textContent`))
	})

	within("shell", func(t *testing.T) { checkShell(t, b, call) })

	within("read_only_session_and_wrong_key", func(t *testing.T) {
		ro := call(http.MethodPost, "/v1/api-keys", map[string]any{"name": "viewer", "role": "read_only"})
		list := audienceOf("ro", 1)
		id := draft("read only", list, nil)
		sub := call(http.MethodGet, "/v1/subscribers?email=ro1", nil)["data"].([]any)[0].(map[string]any)["id"]
		b.eval(`__t.click('Sign out')`)
		b.wait(`!!document.querySelector('main.signin')`)
		b.eval(`__t.click('Sign in with an API key')`) // a person's password form comes first
		b.eval(`__t.fill('API key', 'sok_this-key-is-wrong')`)
		b.eval(`__t.click('Sign in')`)
		b.wait(`!!document.querySelector('.error')`)
		msg := b.str(`document.querySelector('.error').innerText`)
		require.Contains(t, msg, "key is not valid")
		require.NotContains(t, msg, "session has ended")
		b.eval(fmt.Sprintf(`__t.fill('API key', %q)`, ro["token"]))
		b.eval(`__t.click('Sign in')`)
		b.wait(`!!document.querySelector('nav')`)
		var offered []string
		for _, p := range [][2]string{{"#/overview", "Overview"}, {"#/campaigns", "Campaigns"}, {"#/campaigns/" + id, "read only"},
			{"#/subscribers", "Subscribers"}, {fmt.Sprintf("#/subscribers/%v", sub), "ro1@example.com"}, {"#/lists", "Lists"},
			{fmt.Sprintf("#/lists/%v", list), "ro"}, {"#/templates", "Templates"}, {"#/segments", "Segments"},
			{"#/suppressions", "Suppressions"}, {"#/senders", "Senders"}, {"#/endpoints", "Event endpoints"},
			{"#/sequences", "Sequences"}, {"#/messages", "Messages"}, {"#/keys", "API keys"}} {
			b.open(p[0], p[1])
			time.Sleep(500 * time.Millisecond)
			found := b.str(`JSON.stringify([...document.querySelectorAll('main button, main a.button, main form input, main form textarea')]
				.filter((el) => el.offsetParent !== null && !el.disabled && !el.closest('[data-reads], form[role=search], .pager'))
				.map((el) => el.textContent.trim() || el.id))`)
			if found != "[]" {
				offered = append(offered, p[0]+": "+found)
			}
		}
		require.Empty(t, offered, "write controls offered to a read-only session")
		b.audit("read-only")
		b.eval(`__t.click('Sign out')`)
		b.wait(`!!document.querySelector('main.signin')`)
		// The last subtest: the browser stays signed out.
	})
}

// importJSON imports subscribers as a JSON array with the key.
func importJSON(t *testing.T, base, key, path string, rows []map[string]any) {
	t.Helper()
	apiCall(t, base, key, http.MethodPost, path, rows)
}
