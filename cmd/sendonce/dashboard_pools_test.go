package main

import (
	"fmt"
	"net/http"
	"testing"

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
