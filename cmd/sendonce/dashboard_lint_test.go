package main

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDashboardLintBeforeApproval: the approval dialog of a draft whose content
// has a "click here" link, an image without alt text and no unsubscribe link lists
// those findings (advice: approving stays possible), axe-clean; a clean draft's
// dialog says the check found nothing.
func TestDashboardLintBeforeApproval(t *testing.T) {
	b, base, key, _ := signedIn(t, "lint")
	list := apiCall(t, base, key, http.MethodPost, "/v1/lists", map[string]any{"name": "readers"})
	camp := func(name, body string) string {
		c := apiCall(t, base, key, http.MethodPost, "/v1/campaigns", map[string]any{"name": name, "subject": "Spring news",
			"from_email": "news@example.com", "html_template": body, "text_template": "Spring news {{.UnsubscribeURL}}",
			"list_ids": []any{list["id"]}})
		return fmt.Sprint(c["id"])
	}
	faulty := camp("faulty", `<p>Our spring collection has arrived with twelve new colours and free shipping all week long for you.</p>
<p><a href="https://shop.example.com">Click here</a> <img src="https://cdn.example.com/a.png"></p>`)
	clean := camp("clean", `<p>Our spring collection has arrived with twelve new colours and free shipping all week long for you.</p>
<p><a href="https://shop.example.com">See the collection</a> · <a href="{{.UnsubscribeURL}}">Unsubscribe</a></p>`)

	b.open("#/campaigns/"+faulty, "faulty")
	b.wait(`__t.click('Approve and send now')`)
	b.wait(`!!document.querySelector('dialog [data-lint]')`)
	rules := b.str(`JSON.stringify([...document.querySelectorAll('dialog [data-rule]')].map((e) => e.dataset.rule))`)
	require.Equal(t, `["link-text-generic","image-alt-missing"]`, rules, "the text part has the unsubscribe link, so only the HTML's faults")
	b.wait(`[...document.querySelectorAll('dialog button')].some((x) => x.textContent === 'Approve and send' && !x.disabled)`)
	b.audit("approve-lint")
	b.eval(`__t.click('Keep as draft')`)

	b.open("#/campaigns/"+clean, "clean")
	b.wait(`__t.click('Approve and send now')`)
	b.wait(`(document.querySelector('dialog [data-lint]') || {}).dataset?.lint === '0'`)
	b.eval(`__t.click('Keep as draft')`)
}
