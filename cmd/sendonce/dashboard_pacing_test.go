package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestDashboardSenderPacing: on a sender's page a person sets limits per
// recipient domain group and a warm-up plan; a limit the API refuses is shown at
// its field and nothing changes; once saved, a campaign through the sender uses
// up today's cap, and the page shows the plan with today's place in it (day 2 of
// 3, 3 of 3 used, the rest waiting for tomorrow). axe-clean, no sideways scroll
// at 390 px; emptying the warm-up field removes the plan. An smtp sender's DKIM
// signing is switched off and on in its form.
func TestDashboardSenderPacing(t *testing.T) {
	t.Parallel()
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"fake"}`)
	}))
	defer sink.Close()
	b, base, key, _ := signedIn(t, "pacing")
	s := apiCall(t, base, key, http.MethodPost, "/v1/senders", map[string]any{"name": "warming relay", "type": "http",
		"settings": map[string]any{"url": sink.URL + "/send"}})
	id := fmt.Sprint(s["id"])

	b.open("#/senders/"+id, "warming relay")
	require.Contains(t, b.str(`document.querySelector('[data-domain-limits]').textContent`), "none")
	b.eval(`__t.fill('Domain limits (per second)', 'hotmail.com=0')`)
	b.eval(`__t.click('Save changes')`)
	b.wait(`!!document.querySelector('.field-error')`)
	require.Contains(t, b.str(`document.querySelector('form[aria-label="Change the sender"]').innerText`), "per_second",
		"the refusal is shown at the domain limits")
	require.Empty(t, apiCall(t, base, key, http.MethodGet, "/v1/senders/"+id, nil)["domain_limits"], "nothing changed")
	b.audit("sender-pacing-refused")

	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	b.eval(`__t.fill('Domain limits (per second)', 'gmail=5, example.org=0.5')`)
	b.eval(fmt.Sprintf(`__t.fill('Warm-up', '5,3,40@%s')`, yesterday))
	b.eval(`__t.click('Save changes')`)
	b.wait(`!!document.querySelector('[data-warmup]')`)
	got := apiCall(t, base, key, http.MethodGet, "/v1/senders/"+id, nil)
	require.Equal(t, []any{map[string]any{"group": "gmail", "per_second": 5.0}, map[string]any{"domain": "example.org", "per_second": 0.5}},
		got["domain_limits"])
	require.Equal(t, map[string]any{"caps": []any{5.0, 3.0, 40.0}, "start": yesterday}, got["warmup"])
	require.Equal(t, "gmail: 5 per second, example.org: 0.5 per second", b.str(`document.querySelector('[data-domain-limits]').textContent`))

	// A campaign of four through the sender: today's cap (3) goes, the fourth waits.
	list := apiCall(t, base, key, http.MethodPost, "/v1/lists", map[string]any{"name": "warm"})["id"]
	var rows []map[string]any
	for i := range 4 {
		rows = append(rows, map[string]any{"email": fmt.Sprintf("warm%d@example.com", i), "status": "confirmed"})
	}
	importJSON(t, base, key, fmt.Sprintf("/v1/subscribers/import?list_id=%v", list), rows)
	camp := apiCall(t, base, key, http.MethodPost, "/v1/campaigns", map[string]any{"name": "warm-up", "from_email": "news@example.com",
		"subject": "Hi", "text_template": "Hi", "list_ids": []any{list}, "sender_id": s["id"]})
	apiCall(t, base, key, http.MethodPost, fmt.Sprintf("/v1/campaigns/%v/approve", camp["id"]), map[string]any{})
	require.Eventually(t, func() bool {
		today, _ := apiCall(t, base, key, http.MethodGet, "/v1/senders/"+id, nil)["warmup_today"].(map[string]any)
		return today != nil && today["used"] == 3.0
	}, 60*time.Second, 200*time.Millisecond, "the day's cap used")

	b.open("#/senders", "Senders")
	b.open("#/senders/"+id, "warming relay")
	b.wait(`!!document.querySelector('[data-warmup] progress')`)
	plan := b.str(`document.querySelector('[data-warmup]').innerText`)
	require.Contains(t, plan, "Day 2 of 3")
	require.Contains(t, plan, "3 of today's cap of 3 used; the rest waits for tomorrow")
	require.Equal(t, "3/3", b.str(`(() => { const p = document.querySelector('[data-warmup] progress'); return p.value + '/' + p.max; })()`))
	require.Equal(t, "3", b.str(`document.querySelector('[data-warmup] li[aria-current="date"]').textContent`), "today's cap marked in the plan")
	b.audit("sender-pacing")

	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844)))
	b.wait(`innerWidth === 390`)
	require.Equal(t, "true", b.str(`String(document.scrollingElement.scrollWidth <= innerWidth)`), "no sideways scrolling on a phone")
	b.audit("sender-pacing-phone")
	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900)))

	b.eval(`__t.fill('Warm-up', '')`)
	b.eval(`__t.click('Save changes')`)
	b.wait(`!document.querySelector('[data-warmup]')`)
	got = apiCall(t, base, key, http.MethodGet, "/v1/senders/"+id, nil)
	require.Nil(t, got["warmup"])
	require.Nil(t, got["warmup_today"])
	require.Len(t, got["domain_limits"], 2, "the limits stay")

	// An smtp sender's DKIM signing, turned on and off again in the form; its other settings stay.
	smtp := apiCall(t, base, key, http.MethodPost, "/v1/senders", map[string]any{"name": "own relay", "type": "smtp",
		"settings": map[string]any{"host": "smtp.example.com", "port": 587, "dkim_sign": false}})
	sid := fmt.Sprint(smtp["id"])
	settings := func() map[string]any {
		return apiCall(t, base, key, http.MethodGet, "/v1/senders/"+sid, nil)["settings"].(map[string]any)
	}
	b.open("#/senders/"+sid, "own relay")
	b.wait(`!!__t.field('DKIM signing')`)
	require.Equal(t, "false", b.str(`__t.field('DKIM signing').value`))
	b.audit("sender-dkim-sign")
	b.eval(`__t.choose('DKIM signing', "Sign with the From domain's active DKIM key")`)
	// The saved sender's form is mounted anew (keyed by updated_at): the next
	// choice must be made in the new one, not in the old one on its way out.
	b.eval(`window.__dkimField = __t.field('DKIM signing'); true`)
	b.eval(`__t.click('Save changes')`)
	require.Eventually(t, func() bool { return settings()["dkim_sign"] != false }, 30*time.Second, 100*time.Millisecond)
	b.wait(`__t.field('DKIM signing') !== window.__dkimField && __t.field('DKIM signing').value === ''`)
	b.eval(`__t.choose('DKIM signing', 'Do not sign (the relay signs)')`)
	b.eval(`__t.click('Save changes')`)
	require.Eventually(t, func() bool { return settings()["dkim_sign"] == false }, 30*time.Second, 100*time.Millisecond)
	require.Equal(t, "smtp.example.com", settings()["host"])
}

// TestDashboardCampaignLocalTime: a draft made in the campaign form with a local
// delivery time stores deliver_at_local and its page says when each recipient
// gets it; emptying the field in an edit sends at once again (null).
func TestDashboardCampaignLocalTime(t *testing.T) {
	t.Parallel()
	b, base, key, _ := signedIn(t, "localtime")
	b.open("#/campaigns/new", "New campaign")
	b.wait(`!!__t.field('Deliver at local time')`)
	b.eval(`__t.fill('Name', 'at nine')`)
	b.eval(`__t.fill('From address', 'news@example.com')`)
	b.eval(`__t.fill('Subject', 'Good morning')`)
	b.eval(`__t.fill('HTML', '<p>Good morning</p>')`)
	b.eval(`__t.fill('Deliver at local time', '09:00')`)
	b.eval(`__t.click('Create draft')`)
	b.wait(`!!document.querySelector('[data-deliver-at-local]')`)
	id := strings.TrimPrefix(b.str(`location.hash`), "#/campaigns/")
	require.Equal(t, "09:00", apiCall(t, base, key, http.MethodGet, "/v1/campaigns/"+id, nil)["deliver_at_local"])
	require.Contains(t, b.str(`document.querySelector('[data-deliver-at-local]').textContent`), "at 09:00 in their own time zone")
	b.audit("campaign-local-time")

	b.eval(`__t.click('Edit draft')`)
	b.wait(`!!__t.field('Deliver at local time') && __t.field('Deliver at local time').value === '09:00'`)
	b.eval(`__t.fill('Deliver at local time', '')`)
	b.eval(`__t.click('Save draft')`)
	b.wait(`!__t.field('Deliver at local time') && !document.querySelector('[data-deliver-at-local]')`)
	require.Nil(t, apiCall(t, base, key, http.MethodGet, "/v1/campaigns/"+id, nil)["deliver_at_local"])
}
