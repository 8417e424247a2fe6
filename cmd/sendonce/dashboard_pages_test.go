package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
)

// TestDashboardPages drives the pages of messages, senders, event endpoints, lists
// and a subscriber on a fresh database, each from its empty state: an http sender
// refused at its URL field, then created against a fake, verified (the failed step
// shown) and made default; transactional messages through it (one sent, one refused
// by the provider) found in the log by status, address and tag, and opened; a
// Postmark sender against a fake, verified, then failing at its auth step once the
// token is revoked, paused by five refused sends (the list shows it with its reason)
// and resumed with a new token; an event endpoint created against a fake receiver
// (its secret shown once), pinged, its delivery seen, redelivered, its secret
// rotated, disabled; a list made, a member added by address (an unknown address
// refused at the field), its members paged, renamed (a taken name refused), its
// double opt-in refused without a From and then saved; a subscriber's attributes
// edited with invalid JSON (refused in the page, nothing sent), a name the API
// refuses (its 422 at the field), then valid values; its lists left and rejoined;
// detail pages of ids the account lacks; deletions. Any JavaScript error fails it,
// and so does an axe-core violation of impact serious or critical on any page.
func TestDashboardPages(t *testing.T) {
	bin, axe := chromiumPath(t), axeScript(t)
	base, cfg := pagesService(t)
	// The browser stops before the service (cleanups run last first), so its open
	// event stream does not hold the server's shutdown.
	b := newPagesBrowser(t, bin, axe)
	bg := context.Background()
	pool, err := openWithTimeout(bg, cfg)
	require.NoError(t, err)
	defer pool.Close()
	_, key, err := account.NewService(pool).Create(bg, "pages")
	require.NoError(t, err)

	// The outside world: an HTTP mail provider that refuses one recipient, and an
	// event receiver that records what it was sent.
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			To string `json:"to"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(m.To, "refused@") {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"error":"mailbox refused by the fake"}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"fake-`+strings.SplitN(m.To, "@", 2)[0]+`"}`)
	}))
	defer provider.Close()
	// A fake of Postmark's API whose server token can be revoked.
	var token sync.Mutex
	accepted := "pm-token-old"
	postmark := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token.Lock()
		ok := r.Header.Get("X-Postmark-Server-Token") == accepted
		token.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case !ok:
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"ErrorCode":10,"Message":"Bad or missing Server API token."}`)
		case r.Method == http.MethodGet && r.URL.Path == "/server":
			_, _ = io.WriteString(w, `{"Name":"fake"}`)
		case r.Method == http.MethodPost && r.URL.Path == "/email":
			_, _ = io.WriteString(w, `{"ErrorCode":0,"Message":"OK","MessageID":"pm-1"}`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer postmark.Close()
	var mu sync.Mutex
	var received []string // bodies, in order
	var signed int
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		received = append(received, string(body))
		if strings.HasPrefix(r.Header.Get("Webhook-Signature"), "v1,") {
			signed++
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	link, err := newLoginLink(bg, pool, "pages", base)
	require.NoError(t, err)
	b.navigate(link)
	b.wait(`!!document.querySelector('nav')`)
	b.eval(pageHelpers)
	b.eval(`window.confirm = () => true; window.h1 = () => (document.querySelector('main h1') || {}).textContent; true`) // the pages ask before deleting

	// Every new page starts from an empty state that says what to do next.
	for _, p := range []struct{ hash, heading, empty string }{
		{"#/messages", "Messages", "No messages yet."},
		{"#/senders", "Senders", "No senders yet."},
		{"#/endpoints", "Event endpoints", "No event endpoints yet."},
		{"#/lists", "Lists", "No lists yet."},
	} {
		b.open(p.hash, p.heading)
		b.wait(fmt.Sprintf(`__t.text().includes(%q)`, p.empty))
		b.audit(strings.TrimPrefix(p.hash, "#/") + "-empty")
	}

	// Senders: the http type's fields; a URL the API refuses shows at the URL field.
	b.open("#/senders", "Senders")
	b.eval(`__t.click('Add a sender')`)
	b.wait(`__t.choose('Type', 'http')`)
	b.wait(`!!__t.field('URL')`)
	b.eval(`__t.fill('Name', 'fake provider')`)
	b.eval(`__t.fill('URL', 'ftp://mail.example.com/send')`)
	b.eval(`__t.click('Create sender')`)
	b.wait(`!!__t.field('URL') && __t.field('URL').getAttribute('aria-invalid') === 'true' && __t.field('URL').parentElement.querySelector('.field-error').textContent.includes('http')`)
	require.Equal(t, "[]", fmt.Sprint(apiCall(t, base, key, http.MethodGet, "/v1/senders", nil)["data"]), "a refused sender is not created")
	b.eval(fmt.Sprintf(`__t.fill('URL', %q)`, provider.URL+"/send"))
	b.eval(`__t.fill('Authorization header', 'Bearer fake-token-1234')`)
	b.eval(`__t.click('Create sender')`)
	b.wait(`/^#\/senders\/\d+$/.test(location.hash) && h1() === 'fake provider'`)
	senderID := strings.TrimPrefix(b.str(`location.hash`), "#/senders/")
	require.Contains(t, b.str(`__t.text()`), "stored, ending")
	require.NotContains(t, b.str(`document.documentElement.innerHTML`), "fake-token-1234", "credentials are never shown")
	// Verify: the http type has no call that checks without sending; the page says so,
	// not as a failure.
	b.eval(`__t.click('Verify credentials')`)
	b.wait(`!!document.querySelector('[data-verify=unverifiable]') && __t.text().includes('cannot be verified')`)
	require.Equal(t, "0", b.str(`String(document.querySelectorAll('main .error').length)`))
	b.eval(`__t.click('Make default')`)
	b.wait(`__t.text().includes('yes: the account')`)
	b.audit("sender")
	snd := apiCall(t, base, key, http.MethodGet, "/v1/senders/"+senderID, nil)
	require.Equal(t, true, snd["default"])
	require.Equal(t, provider.URL+"/send", snd["settings"].(map[string]any)["url"])

	// Messages through the default sender (the fake): one sent, one refused.
	sent := sendMessage(t, base, key, "order-1-receipt", map[string]any{"to": "ada@example.com", "from": "shop@example.com",
		"subject": "Your receipt", "text": "Thanks.", "tags": []string{"receipt"}})
	sendMessage(t, base, key, "order-2-receipt", map[string]any{"to": "refused@example.com", "from": "shop@example.com",
		"subject": "Your receipt", "text": "Thanks.", "tags": []string{"receipt"}})
	sendMessage(t, base, key, "welcome-bob", map[string]any{"to": "bob@example.com", "from": "shop@example.com",
		"subject": "Welcome", "text": "Hi.", "tags": []string{"welcome"}})
	b.open("#/messages", "Messages")
	// The page updates from the stream's send.* events as the messages settle.
	b.wait(`document.querySelectorAll('table.messages-log tbody tr').length === 3 && document.querySelectorAll('table.messages-log [data-status=sent]').length === 2 && document.querySelectorAll('table.messages-log [data-status=failed]').length === 1`)
	b.audit("messages")
	b.wait(`__t.choose('Status', 'failed')`)
	b.eval(`__t.click('Filter')`)
	b.wait(`document.querySelectorAll('table.messages-log tbody tr').length === 1 && document.querySelector('table.messages-log').innerText.includes('refused@example.com')`)
	b.wait(`__t.choose('Status', 'Any status')`)
	b.eval(`__t.fill('Tag', 'welcome')`)
	b.eval(`__t.click('Filter')`)
	b.wait(`document.querySelectorAll('table.messages-log tbody tr').length === 1 && document.querySelector('table.messages-log').innerText.includes('bob@example.com')`)
	b.eval(`__t.fill('Tag', '')`)
	b.eval(`__t.fill('To address', 'nobody@example.com')`)
	b.eval(`__t.click('Filter')`)
	b.wait(`__t.text().includes('No message matches these filters.')`)
	b.eval(`__t.fill('To address', 'ADA@example.com')`)
	b.eval(`__t.click('Filter')`)
	b.wait(`document.querySelectorAll('table.messages-log tbody tr').length === 1`)
	b.eval(`__t.click('ada@example.com')`)
	b.wait(fmt.Sprintf(`location.hash === '#/messages/%v' && !!document.querySelector('[data-provider-id]')`, sent["id"]))
	require.Equal(t, "fake-ada", b.str(`document.querySelector('[data-provider-id]').textContent`))
	require.Contains(t, b.str(`__t.text()`), "order-1-receipt")
	b.audit("message")
	b.open("#/messages", "Messages")
	b.wait(`__t.choose('Status', 'failed')`)
	b.eval(`__t.click('Filter')`)
	b.wait(`document.querySelectorAll('table.messages-log tbody tr').length === 1`)
	b.eval(`__t.click('refused@example.com')`)
	b.wait(`!!document.querySelector('dl.facts [data-status=failed]') && __t.text().includes('422')`)

	// A Postmark sender against the fake: verified. Then Postmark revokes the token:
	// the check fails at its auth step, five refused sends in a row pause the sender,
	// which stands out in the list with its reason; a new token from its page resumes it.
	b.open("#/senders", "Senders")
	b.eval(`__t.click('Add a sender')`)
	b.wait(`__t.choose('Type', 'postmark')`)
	b.wait(`!!__t.field('Server token')`)
	b.eval(`__t.fill('Name', 'postmark')`)
	b.eval(`__t.fill('Server token', 'pm-token-old')`)
	b.eval(fmt.Sprintf(`__t.fill('API origin', %q)`, postmark.URL))
	b.eval(`__t.click('Create sender')`)
	b.wait(`/^#\/senders\/\d+$/.test(location.hash) && h1() === 'postmark'`)
	pmID := strings.TrimPrefix(b.str(`location.hash`), "#/senders/")
	b.eval(`__t.click('Verify credentials')`)
	b.wait(`!!document.querySelector('[data-verify=ok]')`)
	token.Lock()
	accepted = "pm-token-new"
	token.Unlock()
	b.eval(`__t.click('Verify credentials')`)
	b.wait(`!!document.querySelector('[data-verify=failed][data-step=auth]') && __t.text().includes('Bad or missing Server API token.')`)
	pmNum, err := strconv.ParseInt(pmID, 10, 64)
	require.NoError(t, err)
	for i := range 5 {
		sendMessage(t, base, key, fmt.Sprintf("locked-%d", i), map[string]any{"to": fmt.Sprintf("user%d@example.com", i),
			"from": "shop@example.com", "subject": "Hi", "text": "Hi.", "sender_id": pmNum})
	}
	require.Eventually(t, func() bool {
		return apiCall(t, base, key, http.MethodGet, "/v1/senders/"+pmID, nil)["paused_reason"] != nil
	}, time.Minute, 100*time.Millisecond, "the sender pauses after five auth failures")
	b.open("#/senders", "Senders")
	b.wait(`!!document.querySelector('tr.paused .tag.paused') && document.querySelector('tr.paused').innerText.includes('auth/config failures')`)
	b.audit("senders")
	b.eval(`__t.click('postmark')`)
	b.wait(`!!document.querySelector('[data-paused]') && __t.text().includes('resumes it')`)
	b.eval(`__t.fill('Server token', 'pm-token-new')`)
	b.eval(`__t.click('Save changes')`)
	b.wait(`!document.querySelector('[data-paused]') && __t.text().includes('stored, ending …-new')`)
	require.Nil(t, apiCall(t, base, key, http.MethodGet, "/v1/senders/"+pmID, nil)["paused_reason"])
	b.eval(`__t.click('Verify credentials')`)
	b.wait(`!!document.querySelector('[data-verify=ok]')`)

	// Event endpoints: created against the fake receiver, its secret shown once.
	b.open("#/endpoints", "Event endpoints")
	b.eval(`__t.fill('URL', 'gopher://hooks.example.com/x')`)
	b.eval(`__t.click('Create endpoint')`)
	b.wait(`__t.field('URL').getAttribute('aria-invalid') === 'true'`)
	b.eval(fmt.Sprintf(`__t.fill('URL', %q)`, receiver.URL+"/hook"))
	b.eval(`__t.fill('Description', 'the fake receiver')`)
	b.eval(`__t.click('Create endpoint')`)
	b.wait(`!!document.querySelector('[data-secret] code') && document.querySelector('[data-secret] code').textContent.startsWith('whsec_')`)
	firstSecret := b.str(`document.querySelector('[data-secret] code').textContent`)
	b.wait(`__t.text().includes('the fake receiver')`)
	b.audit("endpoints")
	b.eval(`__t.click('Open the new endpoint')`)
	b.wait(`/^#\/endpoints\/\d+$/.test(location.hash) && __t.text().includes('Nothing delivered yet.')`)
	b.eval(`__t.click('Ping')`)
	b.wait(`__t.text().includes('Ping queued as')`)
	// Deliveries are not on the stream: the page asks again while one is on its way.
	b.wait(`document.querySelectorAll('tr[data-delivery=delivered]').length === 1`)
	mu.Lock()
	require.Len(t, received, 1)
	require.Contains(t, received[0], `"endpoint.ping"`)
	mu.Unlock()
	b.eval(`document.getElementById('deliveries').scrollIntoView(); true`)
	b.audit("endpoint")
	b.eval(`__t.click('Redeliver')`)
	b.wait(`__t.text().includes('Queued again:')`)
	b.wait(`document.querySelectorAll('tr[data-delivery=delivered]').length === 2`)
	mu.Lock()
	require.Len(t, received, 2)
	require.Equal(t, received[0], received[1], "the same event, delivered again")
	require.Equal(t, 2, signed)
	mu.Unlock()
	b.eval(`__t.click('Rotate secret')`)
	b.wait(`!!document.querySelector('[data-secret] code') && document.querySelector('[data-secret] code').textContent.startsWith('whsec_')`)
	require.NotEqual(t, firstSecret, b.str(`document.querySelector('[data-secret] code').textContent`))
	require.Contains(t, b.str(`__t.text()`), "keeps signing beside it until")
	b.eval(`__t.click('Disable')`)
	b.wait(`__t.text().includes('disabled') && [...document.querySelectorAll('button')].some((b) => b.textContent === 'Enable')`)

	// Lists: a list with members, one added by address from the UI.
	ada := apiCall(t, base, key, http.MethodPost, "/v1/subscribers", map[string]any{"email": "ada@example.com", "name": "Ada",
		"status": "confirmed", "attributes": map[string]any{"plan": "free"}})
	b.open("#/lists", "Lists")
	b.eval(`__t.fill('List name', 'vip')`)
	b.eval(`__t.click('Create list')`)
	b.wait(`/^#\/lists\/\d+$/.test(location.hash) && h1() === 'vip' && __t.text().includes('No members yet.')`)
	listID := strings.TrimPrefix(b.str(`location.hash`), "#/lists/")
	b.eval(`__t.fill('Subscriber address', 'nobody@example.com')`)
	b.eval(`__t.click('Add to list')`)
	b.wait(`__t.field('Subscriber address').getAttribute('aria-invalid') === 'true' && __t.text().includes('No subscriber has the address nobody@example.com')`)
	b.eval(`__t.fill('Subscriber address', 'Ada@Example.com')`)
	b.eval(`__t.click('Add to list')`)
	b.wait(`__t.text().includes('ada@example.com is now a member.') && document.querySelector('table.members').innerText.includes('ada@example.com') && document.querySelector('[data-members]').dataset.members === '1'`)
	require.EqualValues(t, 1, apiCall(t, base, key, http.MethodGet, "/v1/lists/"+listID, nil)["member_count"])
	b.audit("list")

	// Members a page at a time: 55 more, imported into the list; one name is markup,
	// which the page shows as text (any script it ran would fail the test).
	var rows []map[string]any
	for i := range 55 {
		rows = append(rows, map[string]any{"email": fmt.Sprintf("member%02d@example.com", i), "status": "confirmed"})
	}
	rows[0]["name"] = `<img src=x onerror="console.error('injected')">`
	apiCall(t, base, key, http.MethodPost, "/v1/subscribers/import?list_id="+listID, rows)
	b.open("#/lists", "Lists")
	b.wait(`__t.click('vip')`)
	b.wait(`document.querySelectorAll('table.members tbody tr').length === 50 && document.querySelector('[data-members]').dataset.members === '56'`)
	// The import merges the row with a name in a batch of its own (rows that give a
	// name apart from rows that do not), which may take its id before or after the
	// others': the markup is on the first page or the second, as text on either.
	onFirst := b.str(`String(document.querySelector('table.members').innerText.includes('<img src=x'))`) == "true"
	b.wait(`!document.querySelector('table.members img')`)
	b.eval(`__t.click('Next page')`)
	b.wait(`document.querySelectorAll('table.members tbody tr').length === 6 && __t.text().includes('Page 2') && document.querySelector('table.members').innerText.includes('member54@example.com')`)
	b.wait(`!document.querySelector('table.members img')`)
	if !onFirst {
		b.wait(`document.querySelector('table.members').innerText.includes('<img src=x')`)
	}
	b.eval(`__t.click('Previous page')`)
	b.wait(`document.querySelectorAll('table.members tbody tr').length === 50 && document.querySelector('table.members').innerText.includes('ada@example.com')`)
	// Renamed; a name another list has is refused at the field.
	apiCall(t, base, key, http.MethodPost, "/v1/lists", map[string]any{"name": "taken"})
	b.eval(`document.querySelector('main details summary').click(); true`)
	b.eval(`__t.fill('List name', 'taken')`)
	b.eval(`__t.click('Save')`)
	b.wait(`__t.field('List name').getAttribute('aria-invalid') === 'true' || __t.text().includes('already')`)
	b.eval(`__t.fill('List name', 'very important')`)
	b.eval(`__t.click('Save')`)
	b.wait(`h1() === 'very important'`)
	// Double opt-in needs the confirmation's From: refused at that field, then saved.
	b.eval(`[...document.querySelectorAll('main details summary')].find((s) => s.textContent.startsWith('Sign-up')).click(); true`)
	b.wait(`__t.choose('Opt-in', 'double: a confirmation email first')`)
	b.eval(`__t.click('Save sign-up settings')`)
	b.wait(`__t.field('Confirmation From address').getAttribute('aria-invalid') === 'true'`)
	b.eval(`__t.fill('Confirmation From address', 'news@example.com')`)
	b.eval(`__t.click('Save sign-up settings')`)
	b.wait(`__t.text().includes('opt-in double')`)
	require.Equal(t, "double", apiCall(t, base, key, http.MethodGet, "/v1/lists/"+listID, nil)["optin"])

	// The subscriber's page, from the members table: edit attributes.
	b.eval(`__t.click('ada@example.com')`)
	b.wait(fmt.Sprintf(`location.hash === '#/subscribers/%v' && h1() === 'ada@example.com' && !!document.querySelector('.memberships')`, ada["id"]))
	require.Contains(t, b.str(`document.querySelector('.memberships').innerText`), "very important")
	before := apiCall(t, base, key, http.MethodGet, fmt.Sprintf("/v1/subscribers/%v", ada["id"]), nil)["updated_at"]
	b.eval(`__t.fill('Attributes', '{"plan": "pro",')`)
	b.eval(`__t.click('Save subscriber')`)
	b.wait(`__t.field('Attributes').getAttribute('aria-invalid') === 'true' && __t.field('Attributes').parentElement.querySelector('.field-error').textContent.startsWith('Not valid JSON')`)
	b.eval(`__t.fill('Attributes', '["pro"]')`)
	b.eval(`__t.click('Save subscriber')`)
	b.wait(`__t.field('Attributes').parentElement.querySelector('.field-error').textContent.startsWith('The attributes are a JSON object')`)
	require.Equal(t, before, apiCall(t, base, key, http.MethodGet, fmt.Sprintf("/v1/subscribers/%v", ada["id"]), nil)["updated_at"],
		"invalid JSON is refused in the page: nothing was sent")
	b.eval(`__t.fill('Attributes', '{"plan": "pro", "seats": 5}')`)
	b.eval(fmt.Sprintf(`__t.fill('Name', %q)`, strings.Repeat("n", 501)))
	b.eval(`__t.click('Save subscriber')`)
	b.wait(`__t.field('Name').getAttribute('aria-invalid') === 'true' && !!__t.field('Name').parentElement.querySelector('.field-error')`)
	b.eval(`__t.fill('Name', 'Ada Lovelace')`)
	b.eval(`__t.click('Save subscriber')`)
	b.wait(`!!document.querySelector('[data-saved]') && !document.querySelector('.field-error')`)
	got := apiCall(t, base, key, http.MethodGet, fmt.Sprintf("/v1/subscribers/%v", ada["id"]), nil)
	require.Equal(t, "Ada Lovelace", got["name"])
	require.Equal(t, map[string]any{"plan": "pro", "seats": float64(5)}, got["attributes"])
	b.audit("subscriber")

	// Out of the list from the subscriber's page, then the list page agrees.
	b.eval(`__t.click('Remove')`)
	b.wait(`__t.text().includes('Not in any list.')`)
	b.wait(`__t.choose('Add to list', 'very important')`)
	b.eval(`__t.click('Add')`)
	b.wait(`!!document.querySelector('.memberships') && document.querySelector('.memberships').innerText.includes('very important')`)
	require.EqualValues(t, 56, apiCall(t, base, key, http.MethodGet, "/v1/lists/"+listID, nil)["member_count"])
	b.eval(`__t.click('Remove')`)
	b.wait(`__t.text().includes('Not in any list.')`)
	require.EqualValues(t, 55, apiCall(t, base, key, http.MethodGet, "/v1/lists/"+listID, nil)["member_count"], "the imported members stay")

	// A phone-width screen: the subscriber and sender pages.
	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844)))
	b.open("#/senders/"+senderID, "fake provider")
	b.audit("sender-phone")
	require.Equal(t, "true", b.str(`String(document.documentElement.scrollWidth <= window.innerWidth + 1)`), "no sideways scrolling on a phone")
	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900)))

	// An id the account does not have (another account's answers the same 404): the
	// page says so, with a way back, and throws nothing.
	for _, p := range []struct{ hash, heading, back string }{
		{"#/messages/999999", "Message 999999", "All messages"},
		{"#/senders/999999", "Sender 999999", "All senders"},
		{"#/endpoints/999999", "Endpoint 999999", "All endpoints"},
		{"#/lists/999999", "List 999999", "All lists"},
		{"#/subscribers/999999", "Subscriber 999999", "All subscribers"},
	} {
		b.open(p.hash, p.heading)
		b.wait(fmt.Sprintf(`!!document.querySelector('main [role=alert]') && document.querySelector('main [role=alert]').innerText.includes('not found') && __t.text().includes(%q)`, p.back))
	}
	require.Empty(t, b.errs.all())

	// Delete the sender and the list; each page goes back to its index.
	b.open("#/senders/"+senderID, "fake provider")
	b.eval(`__t.click('Delete sender')`)
	b.wait(`location.hash === '#/senders' && !!document.querySelector('main table') && !document.querySelector('main table').innerText.includes('fake provider') && document.querySelector('main table').innerText.includes('postmark')`)
	b.open("#/lists/"+listID, "very important")
	b.eval(`__t.click('Delete list')`)
	b.wait(`location.hash === '#/lists' && __t.text().includes('taken') && !__t.text().includes('very important')`)
	// A subscriber deleted from its page.
	member := apiCall(t, base, key, http.MethodGet, "/v1/subscribers?email=member01%40", nil)["data"].([]any)[0].(map[string]any)
	b.open(fmt.Sprintf("#/subscribers/%v", member["id"]), "member01@example.com")
	b.eval(`__t.click('Delete subscriber')`)
	b.wait(`location.hash === '#/subscribers'`)
	require.Empty(t, apiCall(t, base, key, http.MethodGet, "/v1/subscribers?email=member01%40", nil)["data"])
	require.Empty(t, b.errs.all())
}
