package main

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDashboardTemplateMarkdown: the template editor's content type switches to
// Markdown, whose textarea and layout picker (the account's layouts) replace the
// HTML and text fields; the live preview shows the Markdown composed in the chosen
// layout; saving creates a Markdown template in that layout, as the API then
// answers it; a read-only session is offered none of it. axe-clean.
func TestDashboardTemplateMarkdown(t *testing.T) {
	b, base, key, _ := signedIn(t, "tplmd")
	lay := apiCall(t, base, key, http.MethodPost, "/v1/layouts", map[string]any{"name": "brand",
		"html": `<html><body><div class="brand-frame">{{content}}</div></body></html>`, "text": "BRAND\n{{content}}"})
	layID := int64(lay["id"].(float64))

	b.open("#/templates", "Templates")
	b.eval(`__t.click('New template')`)
	b.wait(`!!__t.field('HTML') && !__t.field('Markdown')`)
	b.audit("templates-html")
	b.eval(`__t.fill('Name', 'welcome-md')`)
	b.eval(`__t.fill('Subject', 'Welcome {{.Name}}')`)
	b.eval(`__t.choose('Content type', 'Markdown')`)
	b.wait(`!!__t.field('Markdown') && !__t.field('HTML')`)
	b.eval(`__t.fill('Markdown', '# Hello {{.Attributes.plan}}\n\nThanks for **joining**.')`)
	b.eval(`__t.fill('Sample data (JSON object)', '{"plan": "pro"}')`)
	b.wait(`__t.choose('Layout', 'brand')`)
	b.wait(`(() => { const f = document.querySelector('iframe[title="Rendered HTML"]');
		return !!f && f.srcdoc.includes('brand-frame') && f.srcdoc.includes('<h1>Hello pro</h1>') && f.srcdoc.includes('<strong>joining</strong>'); })()`)
	require.Contains(t, b.str(`document.querySelector('[data-rendered] pre').textContent`), "BRAND")
	b.audit("templates-markdown")
	b.eval(`__t.click('Create and preview')`)
	// Created: the editor reopens on the saved template (its Markdown and layout kept).
	b.wait(`[...document.querySelectorAll('button')].some((x) => x.textContent.trim() === 'Save and preview') && __t.field('Layout').selectedOptions[0].textContent === 'brand'`)
	// Saved with a named layout, the default one is still offered: choosing it
	// and saving clears the template's layout_id (PATCH null).
	b.wait(`[...__t.field('Layout').options].some((o) => o.value === '')`)

	list := apiCall(t, base, key, http.MethodGet, "/v1/templates?limit=50", nil)["data"].([]any)
	var tpl map[string]any
	for _, x := range list {
		if m := x.(map[string]any); m["name"] == "welcome-md" {
			tpl = m
		}
	}
	require.NotNil(t, tpl, "the template was created")
	full := apiCall(t, base, key, http.MethodGet, fmt.Sprintf("/v1/templates/%d", int64(tpl["id"].(float64))), nil)
	require.Equal(t, "markdown", full["content_type"])
	require.Equal(t, "# Hello {{.Attributes.plan}}\n\nThanks for **joining**.", full["markdown"])
	require.InDelta(t, float64(layID), full["layout_id"], 0)
	require.Contains(t, full["html"], `<div class="brand-frame"><h1>Hello {{.Attributes.plan}}</h1>`)
	b.eval(`__t.choose('Layout', "The account's default layout")`)
	b.eval(`__t.click('Save and preview')`)
	b.wait(`__t.text().includes('Saved.')`)
	full = apiCall(t, base, key, http.MethodGet, fmt.Sprintf("/v1/templates/%d", int64(tpl["id"].(float64))), nil)
	require.Nil(t, full["layout_id"], "the layout is cleared")
	require.NotContains(t, full["html"], "brand-frame")

	// A read-only session opens the template: the preview, no content type,
	// Markdown or layout control.
	ro := apiCall(t, base, key, http.MethodPost, "/v1/api-keys", map[string]any{"name": "viewer", "role": "read_only"})
	b.eval(`__t.click('Sign out')`)
	b.wait(`!!document.querySelector('main.signin')`)
	b.eval(`__t.click('Sign in with an API key')`)
	b.eval(fmt.Sprintf(`__t.fill('API key', %q)`, ro["token"]))
	b.eval(`__t.click('Sign in')`)
	b.wait(`!!document.querySelector('nav')`)
	b.eval(pageHelpers)
	b.open("#/templates", "Templates")
	b.wait(`__t.click('welcome-md')`)
	b.wait(`!!document.querySelector('[data-rendered]')`)
	offered := b.str(`JSON.stringify([...document.querySelectorAll('main button, main select, main form input, main form textarea')]
		.filter((el) => el.offsetParent !== null && !el.disabled && !el.closest('[data-reads], .pager'))
		.map((el) => el.textContent.trim() || el.id))`)
	require.Equal(t, "[]", offered, "write controls offered to a read-only session")
	b.audit("templates-read-only")
}
