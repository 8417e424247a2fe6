package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
)

// TestDashboardListChoices drives two choices of lists on a fresh database with
// more lists than one page of the API holds (205): a list's confirmation email set
// to one of the account's templates from its sign-up settings and back to the
// built-in one; a second list's page opened straight from the first starting
// afresh; and a subscriber added, from its page, to a list past the first
// 200 after asking for more. No JavaScript error, no serious or critical axe
// violation.
func TestDashboardListChoices(t *testing.T) {
	bin, axe := chromiumPath(t), axeScript(t)
	base, cfg := pagesService(t, manyInFlight)
	b := newPagesBrowser(t, bin, axe)
	bg := context.Background()
	pool, err := openWithTimeout(bg, cfg)
	require.NoError(t, err)
	defer pool.Close()
	_, key, err := account.NewService(pool).Create(bg, "lists")
	require.NoError(t, err)
	tpl := apiCall(t, base, key, http.MethodPost, "/v1/templates", map[string]any{"name": "confirm-en", "subject": "Please confirm",
		"html": `<p><a href="{{.Attributes.confirm_url}}">Confirm</a> {{.Attributes.lists}}</p>`})
	var lists []map[string]any
	for i := range 205 {
		lists = append(lists, apiCall(t, base, key, http.MethodPost, "/v1/lists", map[string]any{"name": fmt.Sprintf("list-%03d", i)}))
	}
	ada := apiCall(t, base, key, http.MethodPost, "/v1/subscribers", map[string]any{"email": "ada@example.com", "status": "confirmed"})

	link, err := newLoginLink(bg, pool, "lists", base)
	require.NoError(t, err)
	b.navigate(link)
	b.wait(`!!document.querySelector('nav')`)
	b.eval(pageHelpers)

	// The confirmation email: a template of the account, then the built-in one again.
	first := fmt.Sprint(lists[0]["id"])
	b.open("#/lists/"+first, "list-000")
	b.eval(`[...document.querySelectorAll('main details summary')].find((s) => s.textContent.startsWith('Sign-up')).click(); true`)
	b.wait(`__t.choose('Confirmation email', 'Template: confirm-en')`)
	b.eval(`__t.click('Save sign-up settings')`)
	b.wait(`!!document.querySelector('[data-optin-template]') && document.querySelector('[data-optin-template]').textContent === 'confirm-en'`)
	require.Equal(t, tpl["id"], apiCall(t, base, key, http.MethodGet, "/v1/lists/"+first, nil)["optin_template_id"])
	b.audit("list-signup")
	b.eval(`[...document.querySelectorAll('main details summary')].find((s) => s.textContent.startsWith('Sign-up')).click(); true`)
	b.wait(`__t.field('Confirmation email').value === '` + fmt.Sprint(tpl["id"]) + `'`)
	b.wait(`__t.choose('Confirmation email', "The built-in email, in the list's language")`)
	b.eval(`__t.click('Save sign-up settings')`)
	b.wait(`!document.querySelector('[data-optin-template]')`)
	require.Nil(t, apiCall(t, base, key, http.MethodGet, "/v1/lists/"+first, nil)["optin_template_id"])

	// Straight from one list's page to another's: the second starts afresh (what was
	// typed on the first is not carried over).
	b.eval(`__t.fill('Subscriber address', 'typed@example.com')`)
	b.open("#/lists/"+fmt.Sprint(lists[1]["id"]), "list-001")
	require.Equal(t, "", b.str(`__t.field('Subscriber address').value`), "another list's page keeps nothing of the previous one")

	// A list past the first 200, from the subscriber's page.
	b.open(fmt.Sprintf("#/subscribers/%v", ada["id"]), "ada@example.com")
	b.wait(`!!__t.field('Add to list') && __t.field('Add to list').options.length === 201`)
	require.Equal(t, "false", b.str(`String([...__t.field('Add to list').options].some((o) => o.textContent === 'list-204'))`))
	b.eval(`__t.click('More lists')`)
	b.wait(`__t.choose('Add to list', 'list-204')`)
	require.Equal(t, "206", b.str(`String(__t.field('Add to list').options.length)`))
	require.Equal(t, "false", b.str(`String(!!__t.click('More lists'))`), "every list is offered: no more to ask for")
	b.eval(`__t.click('Add')`)
	b.wait(`!!document.querySelector('.memberships') && document.querySelector('.memberships').innerText.includes('list-204')`)
	mine := apiCall(t, base, key, http.MethodGet, fmt.Sprintf("/v1/subscribers/%v/lists", ada["id"]), nil)["data"].([]any)
	require.Len(t, mine, 1)
	require.Equal(t, lists[204]["id"], mine[0].(map[string]any)["list_id"])
	b.wait(`__t.field('Add to list').options.length === 205`)
	b.audit("subscriber-lists")
}
