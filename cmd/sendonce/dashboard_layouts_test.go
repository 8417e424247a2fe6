package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDashboardLayouts: the layouts page makes a layout with a header, a
// footer and brand colours (one typed, one picked with the colour input); a bad
// colour is refused at its field with the API's words and nothing changes; an
// edit recomposes a block template framed in it (its button takes the new
// primary colour). One primary button per view, axe-clean.
func TestDashboardLayouts(t *testing.T) {
	b, base, key, _ := signedIn(t, "layouts")
	b.eval(`window.confirm = () => true; true`)

	b.open("#/layouts", "Layouts")
	b.wait(`__t.text().includes('No layouts yet.')`)
	b.audit("layouts-empty")
	b.eval(`__t.click('New layout')`)
	b.wait(`!!__t.field('HTML frame')`)
	onePrimary := func() {
		t.Helper()
		require.Equal(t, "1", b.str(`String([...document.querySelectorAll('main .primary')].filter((e) => e.offsetParent !== null).length)`))
	}
	onePrimary()
	b.eval(`__t.fill('Name', 'brand')`)
	b.eval(`__t.fill('HTML frame', '<div class="frame">{{content}}</div>')`)
	b.eval(`__t.fill('Header (HTML)', '<h1 style="color:{{brand.primary}}">ACME</h1>')`)
	b.eval(`__t.fill('Footer (HTML)', '<p>ACME Ltd</p>')`)
	b.eval(`__t.fill('Primary colour', '#C2410C')`)
	// The picker fills the link colour's field.
	b.eval(`(() => { const el = __t.field('Pick the link colour'); el.value = '#0b6e4f'; el.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
	b.wait(`__t.field('Link colour').value === '#0b6e4f'`)
	b.eval(`__t.fill('Background colour', 'grey')`)
	b.eval(`__t.click('Create layout')`)
	b.wait(`!!document.querySelector('.field-error') && document.querySelector('.field-error').textContent.includes('brand background must be a colour')`)
	require.Equal(t, "true", b.str(`String(__t.field('Background colour').getAttribute('aria-invalid'))`))
	b.audit("layouts-refused")
	require.Empty(t, apiCall(t, base, key, http.MethodGet, "/v1/layouts", nil)["data"], "nothing stored")

	b.eval(`__t.fill('Background colour', '')`)
	b.eval(`__t.click('Create layout')`)
	b.wait(`__t.text().includes('Edit brand') && !!document.querySelector('main table')`)
	onePrimary()
	b.audit("layouts")
	list := apiCall(t, base, key, http.MethodGet, "/v1/layouts", nil)["data"].([]any)
	require.Len(t, list, 1)
	lay := list[0].(map[string]any)
	require.Equal(t, `<h1 style="color:{{brand.primary}}">ACME</h1>`, lay["header"])
	require.Equal(t, map[string]any{"primary": "#c2410c", "link": "#0b6e4f"}, lay["brand"])

	// A block template in the layout, then an edit of the primary colour in the form.
	tpl := apiCall(t, base, key, http.MethodPost, "/v1/templates", map[string]any{"name": "blk", "subject": "S", "content_type": "blocks",
		"layout_id": lay["id"], "blocks": map[string]any{"rows": []any{map[string]any{"columns": []any{map[string]any{"blocks": []any{
			map[string]any{"type": "button", "text": "Shop", "url": "https://shop.example/"}}}}}}}})
	require.Contains(t, tpl["html"], `bgcolor="#c2410c"`)
	b.eval(`__t.fill('Primary colour', '#123456')`)
	b.eval(`__t.click('Save layout')`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := apiCall(t, base, key, http.MethodGet, fmt.Sprintf("/v1/templates/%.0f", tpl["id"]), nil)["html"].(string)
		if strings.Contains(got, `bgcolor="#123456"`) {
			break
		}
		require.True(t, time.Now().Before(deadline), "the template was not recomposed: %s", got)
		time.Sleep(100 * time.Millisecond)
	}

	// Delete: 409 while the template uses it, the API's words shown.
	b.eval(`document.querySelector('button[aria-label="Delete brand"]').click(); true`)
	b.wait(`!!document.querySelector('.error')`)
	b.audit("layouts-in-use")
}
