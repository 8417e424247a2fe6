package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// uploadPNG puts a w×h PNG named name in the account's library through the API.
func uploadPNG(t *testing.T, base, key, name string, w, h int) map[string]any {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{200, 60, 20, 255})
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	req, err := http.NewRequest(http.MethodPost, base+"/v1/media?name="+name, &buf)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "image/png")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusCreated, res.StatusCode, string(body))
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m))
	return m
}

// TestDashboardContentEditors: in the template editor the media picker (a modal
// dialog, opened and driven by the keyboard) inserts a library image as an HTML
// <img> with its alt text, and as Markdown ![alt](url); the preview shows the
// message at a mobile width and in dark mode (the message's own dark rules
// applied) with its text part, for a chosen subscriber's data. The campaign
// form writes a Markdown draft in a layout, its preview renders it, and the
// layout is cleared again. axe-clean throughout.
func TestDashboardContentEditors(t *testing.T) {
	b, base, key, _ := signedIn(t, "content")
	logo := uploadPNG(t, base, key, "logo.png", 300, 80)
	apiCall(t, base, key, http.MethodPost, "/v1/subscribers", map[string]any{"email": "ada@example.com", "name": "Ada Lovelace",
		"attributes": map[string]any{"plan": "gold"}})
	lay := apiCall(t, base, key, http.MethodPost, "/v1/layouts", map[string]any{"name": "frame",
		"html": `<html><body><div class="frame-x">{{content}}</div></body></html>`})

	b.open("#/templates", "Templates")
	b.eval(`__t.click('New template')`)
	b.wait(`!!__t.field('HTML')`)
	b.eval(`__t.fill('Name', 'picked')`)
	b.eval(`__t.fill('Subject', 'Hi {{.Name}}')`)
	b.eval("__t.fill('HTML', '<style>@media (prefers-color-scheme: dark) { .card { color: #fafafa } }</style><p class=\"card\">Plan {{.Attributes.plan}} for {{.Name}}</p>')")
	b.eval(`__t.fill('Text', 'Plan {{.Attributes.plan}} for {{.Name}}')`)

	// The picker, by keyboard: focus its button, Enter opens the dialog (focus
	// moves into it), Tab to the image, Space picks it, type the alt text, Enter inserts.
	b.eval(`(() => { const x = [...document.querySelectorAll('button')].find((x) => x.textContent.trim() === 'Insert image'); x.focus(); return document.activeElement === x; })()`)
	key1 := func(k string) {
		t.Helper()
		require.NoError(t, chromedp.Do(b.ctx, chromedp.KeyEvent(k)))
	}
	key1("\r")
	b.wait(`document.querySelector('dialog.media-picker').open && document.querySelector('dialog.media-picker').contains(document.activeElement)`)
	b.wait(`!!document.querySelector('dialog.media-picker button.pick')`)
	b.audit("media-picker")
	for range 10 {
		if b.str(`document.activeElement.classList.contains('pick') ? 'yes' : 'no'`) == "yes" {
			break
		}
		key1("\t")
	}
	require.Equal(t, "yes", b.str(`document.activeElement.classList.contains('pick') ? 'yes' : 'no'`), "Tab reaches the library's image")
	key1(" ")
	b.wait(`document.querySelector('button.pick').getAttribute('aria-pressed') === 'true'`)
	// The picked image's name is the alt text offered; it is typed over.
	b.eval(`(() => { const el = document.querySelector('dialog.media-picker input:not([type=file])'); el.focus();
		Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(el, ''); el.dispatchEvent(new Event('input', { bubbles: true })); return document.activeElement === el; })()`)
	key1("Company logo")
	key1("\r")
	b.wait(`!document.querySelector('dialog.media-picker').open`)
	htmlVal := b.str(`__t.field('HTML').value`)
	require.Contains(t, htmlVal, fmt.Sprintf(`<img src="%s" alt="Company logo" width="300" height="80"`, logo["url"]))

	// The preview: the image is in it; mobile width; dark mode; the text part.
	b.wait(fmt.Sprintf(`document.querySelector('iframe[title="Rendered HTML"]').srcdoc.includes(%q)`, logo["url"]))
	b.eval(`(() => { const r = [...document.querySelectorAll('input[name=preview-width]')].find((x) => x.value === 'mobile'); r.click(); return true; })()`)
	b.wait(`document.querySelector('iframe[title="Rendered HTML"]').getBoundingClientRect().width <= 375`)
	desktop := b.str(`String(document.querySelector('iframe[title="Rendered HTML"]').srcdoc.includes('data-preview-dark'))`)
	require.Equal(t, "false", desktop)
	b.eval(`(() => { document.querySelector('[data-preview-dark-toggle]').click(); return true; })()`)
	b.wait(`(() => { const s = document.querySelector('iframe[title="Rendered HTML"]').srcdoc;
		return s.includes('data-preview-dark') && s.includes('@media all { .card') && !s.includes('prefers-color-scheme'); })()`)
	b.audit("template-preview-dark-mobile")

	// A chosen subscriber's data.
	b.eval(`__t.fill('As subscriber', 'ada@example.com')`)
	b.eval(`__t.click('Preview as')`)
	b.wait(`document.querySelector('iframe[title="Rendered HTML"]').srcdoc.includes('Plan gold for Ada Lovelace')`)
	require.Contains(t, b.str(`document.querySelector('pre[aria-label="Text part"]').textContent`), "Plan gold for Ada Lovelace")
	require.Contains(t, b.str(`__t.text()`), "Preview with ada@example.com's data")

	// Markdown: the picker inserts ![alt](url).
	b.eval(`__t.choose('Content type', 'Markdown')`)
	b.wait(`!!__t.field('Markdown')`)
	b.eval(`__t.fill('Markdown', '# News')`)
	b.eval(`__t.click('Insert image')`)
	b.wait(`!!document.querySelector('dialog.media-picker[open] button.pick')`)
	b.eval(`(() => { document.querySelector('dialog.media-picker button.pick').click(); return true; })()`)
	b.eval(`__t.fill('Alt text', 'Logo')`)
	b.eval(`__t.click('Insert')`)
	b.wait(fmt.Sprintf(`__t.field('Markdown').value === %q`, fmt.Sprintf("# News\n![Logo](%s)\n", logo["url"])))
	b.wait(fmt.Sprintf(`document.querySelector('iframe[title="Rendered HTML"]').srcdoc.includes('<img src="%s" alt="Logo"')`, logo["url"]))

	// The campaign form: a Markdown draft in a layout, previewed, then the layout cleared.
	b.open("#/campaigns/new", "New campaign")
	b.eval(`__t.fill('Name', 'md-campaign')`)
	b.eval(`__t.fill('From address', 'news@example.com')`)
	b.eval(`__t.fill('Subject', 'News for {{.Name}}')`)
	b.eval(`__t.choose('Content type', 'Markdown')`)
	b.wait(`!!__t.field('Markdown') && !__t.field('HTML')`)
	b.eval(`__t.fill('Markdown', 'Hello **{{.Name}}**')`)
	b.wait(`__t.choose('Layout', 'frame')`)
	b.audit("campaign-form-markdown")
	b.eval(`__t.click('Create draft')`)
	b.wait(`(document.querySelector('main h1') || {}).textContent === 'md-campaign'`)
	b.wait(`(() => { const f = document.querySelector('iframe[title="HTML preview"]'); return !!f && f.srcdoc.includes('<div class="frame-x"><p>Hello <strong>Sample Subscriber</strong></p>'); })()`)
	b.eval(`__t.fill('As subscriber', 'ada@example.com')`)
	b.eval(`(() => { const f = document.querySelector('form[aria-label=Preview]'); f.requestSubmit(); return true; })()`)
	b.wait(`document.querySelector('iframe[title="HTML preview"]').srcdoc.includes('<strong>Ada Lovelace</strong>')`)
	b.audit("campaign-preview")

	// At 390 px the draft's page, its preview at desktop width and the picker
	// dialog scroll nothing sideways.
	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844)))
	sideways := func(where string) {
		t.Helper()
		require.Equal(t, "fits", b.str(`document.scrollingElement.scrollWidth <= innerWidth ? 'fits' : document.scrollingElement.scrollWidth + ' > ' + innerWidth`), where)
	}
	b.eval(`(() => { const r = [...document.querySelectorAll('input[name=preview-width]')].find((x) => x.value === 'desktop'); r.click(); return true; })()`)
	sideways("the campaign page")
	b.open("#/campaigns/new", "New campaign")
	b.eval(`__t.click('Insert image')`)
	b.wait(`!!document.querySelector('dialog.media-picker[open] button.pick')`)
	sideways("the picker")
	b.audit("media-picker-phone")
	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900)))

	var id int64
	for _, x := range apiCall(t, base, key, http.MethodGet, "/v1/campaigns?limit=10", nil)["data"].([]any) {
		if c := x.(map[string]any); c["name"] == "md-campaign" {
			id = int64(c["id"].(float64))
			require.Equal(t, "markdown", c["content_type"])
			require.InDelta(t, lay["id"], c["layout_id"], 0)
		}
	}
	require.NotZero(t, id)
	out := apiCall(t, base, key, http.MethodPatch, fmt.Sprintf("/v1/campaigns/%d", id), map[string]any{"layout_id": nil})
	require.Nil(t, out["layout_id"])
	require.NotContains(t, out["html_template"], "frame-x")
}
