package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestDashboardSenderPools: on the senders page a person makes a pool from the
// senders' names in order, sees it listed primary first, and picks it in the
// campaign form's Sender menu: the draft names the pool (pool_id), not a sender.
func TestDashboardSenderPools(t *testing.T) {
	t.Parallel()
	b, base, key, _ := signedIn(t, "pools")
	for _, n := range []string{"relay-one", "relay-two"} {
		apiCall(t, base, key, http.MethodPost, "/v1/senders", map[string]any{"name": n, "type": "http",
			"settings": map[string]any{"url": "https://" + n + ".example/send"}})
	}
	b.open("#/senders", "Senders")
	b.wait(`!!__t.field('Pool name')`)
	b.eval(`__t.fill('Pool name', 'relays')`)
	b.eval(`__t.fill('Senders in order', 'relay-two, relay-one')`)
	b.eval(`__t.click('Create pool')`)
	b.wait(`!!document.querySelector('table[data-pools] tbody tr')`)
	require.Equal(t, "relay-two → relay-one", b.str(`document.querySelector('table[data-pools] tbody tr td:nth-child(2)').textContent`))
	pools := apiCall(t, base, key, http.MethodGet, "/v1/sender-pools", nil)["data"].([]any)
	require.Len(t, pools, 1)
	pool := pools[0].(map[string]any)
	b.audit("sender-pools")

	b.open("#/campaigns/new", "New campaign")
	b.wait(`!!__t.field('Sender') && [...__t.field('Sender').options].some((o) => o.textContent === 'Pool: relays')`)
	b.eval(`__t.fill('Name', 'on a pool')`)
	b.eval(`__t.fill('From address', 'news@example.com')`)
	b.eval(`__t.choose('Sender', 'Pool: relays')`)
	b.eval(`__t.fill('Subject', 'Hello')`)
	b.eval(`__t.fill('HTML', '<p>Hi</p>')`)
	b.eval(`__t.click('Create draft')`)
	b.wait(`location.hash.startsWith('#/campaigns/') && location.hash !== '#/campaigns/new'`)
	camps := apiCall(t, base, key, http.MethodGet, "/v1/campaigns", nil)["data"].([]any)
	require.Len(t, camps, 1)
	c := camps[0].(map[string]any)
	require.Equal(t, fmt.Sprint(pool["id"]), fmt.Sprint(c["pool_id"]), "%v", c)
	require.Nil(t, c["sender_id"])
	b.audit("campaign-on-pool")
}

// TestDashboardMessagePool: a message's page says the route it named — a pool by
// its name, linked to the senders page where pools are listed, or a sender by its
// name, linked to its page — readable at 390 px with only read controls; and a
// sequence's send step can choose a pool in its Sender menu, which the sequence
// then names (pool_id, no sender_id) and its edit form shows again.
func TestDashboardMessagePool(t *testing.T) {
	t.Parallel()
	b, base, key, _ := signedIn(t, "msgpool")
	ids := map[string]any{}
	for _, n := range []string{"relay-one", "relay-two"} {
		ids[n] = apiCall(t, base, key, http.MethodPost, "/v1/senders", map[string]any{"name": n, "type": "http",
			"settings": map[string]any{"url": "https://" + n + ".example/send"}})["id"]
	}
	pool := apiCall(t, base, key, http.MethodPost, "/v1/sender-pools", map[string]any{"name": "relays",
		"senders": []any{ids["relay-two"], ids["relay-one"]}})["id"]
	// Due tomorrow: the messages stay queued, never reaching the senders' made-up hosts.
	send := func(idem string, route map[string]any) string {
		body := map[string]any{"to": "ada@example.com", "from": "shop@example.com", "subject": "Your receipt", "text": "Thanks",
			"send_at": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)}
		for k, v := range route {
			body[k] = v
		}
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, base+"/v1/messages", bytes.NewReader(raw))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", idem)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var m map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
		require.Equal(t, http.StatusAccepted, resp.StatusCode, "%v", m)
		return fmt.Sprint(m["id"])
	}
	viaPool := send("via-pool", map[string]any{"pool_id": pool})
	viaSender := send("via-sender", map[string]any{"sender_id": ids["relay-one"]})
	viaDefault := send("via-default", nil)

	b.open("#/messages/"+viaPool, "Message "+viaPool)
	b.wait(`(document.querySelector('[data-route=pool] a') || {}).textContent === 'relays'`)
	require.Equal(t, "#/senders", b.str(`document.querySelector('[data-route=pool] a').getAttribute('href')`))
	require.Equal(t, "0", b.str(`String([...document.querySelectorAll('main .primary')].filter((e) => e.offsetParent !== null).length)`),
		"a message's page only reads")
	require.Equal(t, "[]", b.str(`JSON.stringify([...document.querySelectorAll('main button')].filter((e) => !e.closest('[data-reads]')).map((e) => e.textContent))`),
		"its one button reads (data-reads)")
	b.audit("message-pool")
	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844)))
	b.wait(`innerWidth === 390`)
	require.Equal(t, "true", b.str(`String(document.scrollingElement.scrollWidth <= innerWidth)`), "no sideways scrolling on a phone")
	b.audit("message-pool-phone")
	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900)))
	b.eval(`document.querySelector('[data-route=pool] a').click(); true`)
	b.wait(`(document.querySelector('main h1') || {}).textContent === 'Senders' && !!document.querySelector('table[data-pools] tbody tr')`)
	require.Equal(t, "relays", b.str(`document.querySelector('table[data-pools] tbody tr td').textContent`))

	b.open("#/messages/"+viaSender, "Message "+viaSender)
	b.wait(`(document.querySelector('[data-route=sender] a') || {}).textContent === 'relay-one'`)
	require.Equal(t, fmt.Sprintf("#/senders/%v", ids["relay-one"]), b.str(`document.querySelector('[data-route=sender] a').getAttribute('href')`))
	b.open("#/messages/"+viaDefault, "Message "+viaDefault)
	b.wait(`!!document.querySelector('[data-route=default]')`)

	tpl := apiCall(t, base, key, http.MethodPost, "/v1/templates", map[string]any{"name": "welcome", "subject": "Welcome", "html": "<p>Hi</p>"})
	b.open("#/sequences/new", "New sequence")
	b.eval(`__t.fill('Sequence name', 'On a pool')`)
	b.eval(`__t.click('Add step')`)
	b.wait(`__t.choose('Step 1 template', 'welcome')`)
	b.eval(`__t.fill('Step 1 From address', 'hello@example.com')`)
	b.wait(`__t.choose('Step 1 sender', 'Pool: relays')`)
	b.audit("sequence-step-pool")
	b.eval(`__t.click('Create sequence')`)
	b.wait(`/^#\/sequences\/\d+$/.test(location.hash) && document.querySelector('main h1').textContent === 'On a pool'`)
	seqID := strings.TrimPrefix(b.str(`location.hash`), "#/sequences/")
	step := apiCall(t, base, key, http.MethodGet, "/v1/sequences/"+seqID, nil)["steps"].([]any)[0].(map[string]any)
	require.Equal(t, tpl["id"], step["template_id"])
	require.Equal(t, fmt.Sprint(pool), fmt.Sprint(step["pool_id"]), "%v", step)
	require.Nil(t, step["sender_id"])
	b.eval(`document.querySelector('section[aria-labelledby=edit] summary').click(); true`)
	b.wait(`!!__t.field('Step 1 sender') && __t.field('Step 1 sender').value === 'pool:' + ` + fmt.Sprint(pool))
}
