package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDashboardBounceMailbox: on the senders page a bounce mailbox with port 0
// is refused at its field and nothing is stored; set properly, the page shows it
// (never the password) with its status, as the API has it. axe-clean each time.
func TestDashboardBounceMailbox(t *testing.T) {
	b, base, key, _ := signedIn(t, "bouncebox")
	b.eval(`window.confirm = () => true; true`)
	b.open("#/senders", "Senders")
	b.wait(`__t.text().includes('No bounce mailbox is set.')`)
	b.audit("bounce-mailbox-none")
	b.eval(`__t.fill('IMAP host', 'imap.example.com')`)
	b.eval(`__t.fill('Port', '0')`)
	b.eval(`__t.fill('User name', 'bounces@news.example.com')`)
	b.eval(`__t.fill('Password', 'dashboard-mailbox-secret')`)
	b.eval(`__t.click('Set the bounce mailbox')`)
	b.wait(`!!document.querySelector('[data-pointer="/port"], .field-error')`)
	b.audit("bounce-mailbox-refused")
	b.eval(`__t.fill('Port', '993')`)
	b.eval(`__t.fill('Password', 'dashboard-mailbox-secret')`)
	b.eval(`__t.click('Set the bounce mailbox')`)
	b.wait(`!!document.querySelector('[data-bounce-mailbox]')`)
	m := apiCall(t, base, key, http.MethodGet, "/v1/bounce-mailbox", nil)
	require.Equal(t, "imap.example.com", m["host"])
	require.EqualValues(t, 993, m["port"])
	require.Equal(t, "tls", m["security"])
	require.NotContains(t, b.str(`document.body.innerText`), "dashboard-mailbox-secret")
	require.Contains(t, b.str(`document.querySelector('[data-bounce-mailbox]').innerText`), "bounces@news.example.com at imap.example.com:993")
	b.audit("bounce-mailbox-set")
	b.eval(`__t.click('Delete the bounce mailbox')`)
	b.wait(`__t.text().includes('No bounce mailbox is set.')`)
}
