package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
)

// TestDashboardExportsAndPerson drives the export buttons of the subscribers,
// suppressions, list and messages pages and a subscriber's activity, data export and
// erasure in headless Chromium. Each export link names the page's current
// filters, and what it downloads with the session is the API's export (CSV
// header, rows). The subscriber page lists the person's activity (a campaign,
// more messages than one page: "Load more" brings the rest), downloads their data,
// and erases them after a confirmation that says it is irreversible; the address
// is then gone (404) and suppressed. A read-only session keeps the exports, the
// activity and the data download, and is offered no erasure. No JavaScript error,
// no serious or critical axe violation.
func TestDashboardExportsAndPerson(t *testing.T) {
	bin, axe := chromiumPath(t), axeScript(t)
	base, cfg := pagesService(t, manyInFlight)
	b := newPagesBrowser(t, bin, axe)
	bg := context.Background()
	pool, err := openWithTimeout(bg, cfg)
	require.NoError(t, err)
	defer pool.Close()
	_, key, err := account.NewService(pool).Create(bg, "person")
	require.NoError(t, err)
	ada := apiCall(t, base, key, http.MethodPost, "/v1/subscribers", map[string]any{"email": "ada@example.com", "name": "Ada", "status": "confirmed"})
	bob := apiCall(t, base, key, http.MethodPost, "/v1/subscribers", map[string]any{"email": "bob@example.com", "status": "confirmed"})
	apiCall(t, base, key, http.MethodPost, "/v1/suppressions", map[string]any{"email": "gone@example.com", "reason": "manual"})
	c := apiCall(t, base, key, http.MethodPost, "/v1/campaigns", map[string]any{"name": "Autumn", "from_email": "news@example.com",
		"subject": "Autumn", "html_template": `<p>Hello</p>`})
	apiCall(t, base, key, http.MethodPost, fmt.Sprintf("/v1/campaigns/%v/approve", c["id"]), map[string]any{})
	require.Eventually(t, func() bool {
		return apiCall(t, base, key, http.MethodGet, fmt.Sprintf("/v1/campaigns/%v", c["id"]), nil)["status"] == "sent"
	}, time.Minute, 100*time.Millisecond)
	// More messages to Ada than one page of her activity holds; one tagged "vip".
	for i := range 55 {
		tags := []string{"receipt"}
		if i == 0 {
			tags = []string{"vip"}
		}
		sendMessage(t, base, key, fmt.Sprintf("m-%d", i), map[string]any{"to": "ada@example.com", "from": "shop@example.com",
			"subject": fmt.Sprintf("Receipt %d", i), "text": "Thanks", "tags": tags})
	}
	var total int
	for cursor := ""; ; {
		p := apiCall(t, base, key, http.MethodGet, fmt.Sprintf("/v1/subscribers/%v/activity?limit=100&cursor=%s", ada["id"], cursor), nil)
		total += len(p["data"].([]any))
		if p["next_cursor"] == nil {
			break
		}
		cursor = p["next_cursor"].(string)
	}
	require.Greater(t, total, 55, "the campaign's send and 55 messages")

	link, err := newLoginLink(bg, pool, "person", base)
	require.NoError(t, err)
	b.navigate(link)
	b.wait(`!!document.querySelector('nav')`)
	b.eval(pageHelpers)
	// fetched answers what a link downloads with the session: its status and body.
	b.eval(`window.__get = async (sel) => { const a = document.querySelector(sel); const r = await fetch(a.href, { credentials: 'same-origin' });
		window.__got = { href: a.getAttribute('href'), download: a.getAttribute('download'), status: r.status, type: r.headers.get('Content-Type'), body: await r.text() }; return true; }; true`)
	fetched := func(sel string) (href, download string, status int, ctype, body string) {
		t.Helper()
		b.eval(`window.__got = null; __get(` + fmt.Sprintf("%q", sel) + `); true`)
		b.wait(`window.__got !== null`)
		var got struct {
			Href, Download, Type, Body string
			Status                     int
		}
		require.NoError(t, json.Unmarshal([]byte(b.str(`JSON.stringify(window.__got)`)), &got))
		return got.Href, got.Download, got.Status, got.Type, got.Body
	}

	// Subscribers: all of them, then with the page's search.
	b.open("#/subscribers", "Subscribers")
	b.wait(`!!document.querySelector('[data-export=subscribers] a[data-format=csv]')`)
	href, download, status, ctype, body := fetched(`[data-export=subscribers] a[data-format=csv]`)
	require.Equal(t, "/v1/subscribers/export?format=csv", href)
	require.Equal(t, "subscribers.csv", download)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "text/csv; charset=utf-8", ctype)
	require.True(t, strings.HasPrefix(body, "id,email,name,status,attributes,created_at,updated_at\r\n"), body)
	require.Contains(t, body, "bob@example.com")
	b.eval(`__t.fill('Address starts with', 'Ada')`)
	b.eval(`__t.click('Search')`)
	b.wait(`document.querySelector('[data-export=subscribers] a[data-format=ndjson]').getAttribute('href').includes('email=ada')`)
	href, _, status, ctype, body = fetched(`[data-export=subscribers] a[data-format=ndjson]`)
	require.Equal(t, "/v1/subscribers/export?format=ndjson&email=ada", href)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "application/x-ndjson", ctype)
	require.Contains(t, body, `"email":"ada@example.com"`)
	require.NotContains(t, body, "bob@example.com")
	b.audit("subscribers-export")

	b.open("#/suppressions", "Suppressions")
	b.wait(`!!document.querySelector('[data-export=suppressions] a[data-format=csv]')`)
	href, _, status, _, body = fetched(`[data-export=suppressions] a[data-format=csv]`)
	require.Equal(t, "/v1/suppressions/export?format=csv", href)
	require.Equal(t, http.StatusOK, status)
	require.True(t, strings.HasPrefix(body, "email,reason,source,created_at\r\n"), body)
	require.Contains(t, body, "gone@example.com,manual")
	b.audit("suppressions-export")

	// A list's page: its members, by the membership chosen.
	list := apiCall(t, base, key, http.MethodPost, "/v1/lists", map[string]any{"name": "Beta"})
	apiCall(t, base, key, http.MethodPost, fmt.Sprintf("/v1/lists/%v/members", list["id"]), map[string]any{"subscriber_ids": []any{bob["id"]}})
	b.open(fmt.Sprintf("#/lists/%v", list["id"]), "Beta")
	b.wait(`!!document.querySelector('[data-export^=list-] a[data-format=csv]')`)
	href, download, status, _, body = fetched(`[data-export^=list-] a[data-format=csv]`)
	require.Equal(t, fmt.Sprintf("/v1/subscribers/export?format=csv&list_id=%v&membership=subscribed", list["id"]), href)
	require.Equal(t, fmt.Sprintf("list-%v-members.csv", list["id"]), download)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "bob@example.com")
	require.NotContains(t, body, "ada@example.com")
	b.audit("list-export")

	b.open("#/messages", "Messages")
	b.wait(`__t.fill('Tag', 'vip')`)
	b.eval(`__t.click('Filter')`)
	b.wait(`document.querySelector('[data-export=messages] a[data-format=csv]').getAttribute('href').includes('tag=vip')`)
	href, _, status, _, body = fetched(`[data-export=messages] a[data-format=csv]`)
	require.Equal(t, "/v1/messages/export?format=csv&tag=vip", href)
	require.Equal(t, http.StatusOK, status)
	lines := strings.Split(strings.TrimSuffix(body, "\r\n"), "\r\n")
	require.Len(t, lines, 2, "the header and the one vip message: %q", body)
	require.True(t, strings.HasPrefix(lines[0], "id,to,from,subject,category,tags,created_at,status,sent_at,feedback"), lines[0])
	require.Contains(t, lines[1], "Receipt 0")
	b.audit("messages-export")

	// Ada's page: her activity, a page then the rest.
	b.open(fmt.Sprintf("#/subscribers/%v", ada["id"]), "ada@example.com")
	b.wait(`document.querySelector('table.activity') && document.querySelector('table.activity').dataset.items === '50'`)
	b.eval(`__t.click('Load more')`)
	b.wait(fmt.Sprintf(`document.querySelector('table.activity').dataset.items === '%d'`, total))
	require.Equal(t, "false", b.str(`String(!!document.querySelector('#activity ~ p button'))`), "no more to load")
	require.Contains(t, b.str(`document.querySelector('table.activity tr[data-kind=send]').innerText`), "Autumn")
	require.Contains(t, b.str(`document.querySelector('table.activity').innerText`), "Receipt 54")
	b.eval(`document.getElementById('activity').scrollIntoView(); true`)
	b.audit("subscriber-activity")
	_, download, status, _, body = fetched(`a[download^=subscriber-]`)
	require.Equal(t, fmt.Sprintf("subscriber-%v.json", ada["id"]), download)
	require.Equal(t, http.StatusOK, status)
	var export map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &export))
	require.Contains(t, body, `"ada@example.com"`)

	// The erasure asks first, saying it cannot be undone; cancelled, nothing changes.
	b.eval(`__t.click('Erase this person…')`)
	b.wait(`!!document.querySelector('dialog[data-erase-confirm][open]')`)
	require.Contains(t, b.str(`document.querySelector('dialog[data-erase-confirm]').innerText`), "irreversible")
	b.audit("subscriber-erase-confirm")
	b.eval(`__t.click('Cancel')`)
	b.wait(`!document.querySelector('dialog[data-erase-confirm]')`)
	apiCall(t, base, key, http.MethodGet, fmt.Sprintf("/v1/subscribers/%v", ada["id"]), nil)
	b.eval(`__t.click('Erase this person…')`)
	b.wait(`!!document.querySelector('dialog[data-erase-confirm][open]')`)
	b.eval(`__t.click('Erase permanently')`)
	b.wait(`location.hash === '#/subscribers'`)
	require.Equal(t, http.StatusNotFound, statusOf(t, base, key, fmt.Sprintf("/v1/subscribers/%v", ada["id"])))
	again := apiCall(t, base, key, http.MethodPost, "/v1/subscribers", map[string]any{"email": "ada@example.com", "status": "confirmed"})
	require.Equal(t, http.StatusOK, statusOf(t, base, key, "/v1/suppressions/ada%40example.com"), "the address came back: suppressed (%v)", again["id"])

	// A read-only session: exports, activity and the data download, no erasure.
	ro := apiCall(t, base, key, http.MethodPost, "/v1/api-keys", map[string]any{"name": "viewer", "role": "read_only"})
	b.eval(`__t.click('Sign out')`)
	b.wait(`!!document.querySelector('main.signin')`)
	b.eval(`__t.click('Sign in with an API key')`)
	b.eval(fmt.Sprintf(`__t.fill('API key', %q)`, ro["token"]))
	b.eval(`__t.click('Sign in')`)
	b.wait(`!!document.querySelector('nav')`)
	b.open(fmt.Sprintf("#/subscribers/%v", bob["id"]), "bob@example.com")
	b.wait(`!!document.querySelector('table.activity tr[data-kind=send]')`)
	require.Equal(t, "true", b.str(`String(document.querySelector('a[download^=subscriber-]').offsetParent !== null)`), "the data download stays")
	require.Equal(t, "false", b.str(`String([...document.querySelectorAll('button')].some((x) => x.textContent.includes('Erase')))`), "no erasure offered")
	b.open("#/subscribers", "Subscribers")
	b.wait(`!!document.querySelector('[data-export=subscribers] a[data-format=csv]')`)
	require.Equal(t, "true", b.str(`String(document.querySelector('[data-export=subscribers] a[data-format=csv]').offsetParent !== null)`), "the export stays visible")
	b.audit("read-only-exports")
	b.eval(`__t.click('Sign out')`)
	b.wait(`!!document.querySelector('main.signin')`)
}

// statusOf answers the status of a GET with the key.
func statusOf(t *testing.T, base, key, path string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}
