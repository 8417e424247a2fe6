package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
)

// TestDashboardBlockBuilder: a campaign built with the block builder by keyboard
// (fields typed and buttons pressed with keys; the two selects set by script): a
// block added, moved up (the move announced, the focus following it),
// the live preview showing the design in the account's default layout; saved, the
// campaign holds the design and its rendered html and text, and its page shows
// the message. axe-clean, and no sideways scrolling at 390 px.
func TestDashboardBlockBuilder(t *testing.T) {
	b, base, key, _ := signedIn(t, "builder")
	apiCall(t, base, key, http.MethodPost, "/v1/layouts", map[string]any{"name": "brand", "default": true,
		"html": `<html><body><div class="brand-frame">{{content}}</div></body></html>`, "text": "BRAND\n{{content}}"})
	keys := func(k string) {
		t.Helper()
		_, err := chromedp.Run(b.ctx, chromedp.KeyEvent(k))
		require.NoError(t, err)
	}
	typeInto := func(label, text string) {
		t.Helper()
		b.wait(fmt.Sprintf(`(() => { const f = __t.field(%q); if (!f) return false; f.focus(); try { f.setSelectionRange(f.value.length, f.value.length); } catch (e) {} return document.activeElement === f; })()`, label))
		keys(text)
	}
	// Headless Chromium's closed <select> takes no arrow key, so a select is set
	// by script (the one step not made with keys).
	choose := func(label, option, want string) {
		t.Helper()
		b.wait(fmt.Sprintf(`__t.choose(%q, %q)`, label, option))
		b.wait(fmt.Sprintf(`__t.field(%q).value === %q`, label, want))
	}
	press := func(selector string) {
		t.Helper()
		b.wait(fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el || el.disabled) return false; el.focus(); return document.activeElement === el; })()`, selector))
		keys(kb.Enter)
	}

	b.open("#/campaigns/new", "New campaign")
	typeInto("Name", "Built with blocks")
	typeInto("From address", "news@example.com")
	typeInto("Subject", "Hello {{.Name}}")
	choose("Content type", "Blocks (visual builder)", "blocks")
	b.wait(`!!__t.field('Heading text') && !!__t.field('Footer text') && !__t.field('HTML')`)
	typeInto("Heading text", " for {{.Name}}")
	typeInto("Text (a blank line starts a paragraph)", " for you")
	choose("New block in row 1", "Button", "button")
	press(`button[data-builder-add="0.0"]`)
	b.wait(`!!__t.field('Button text') && !!__t.field('Link')`)
	typeInto("Link", "https://shop.example/")
	// The button, added last (after the footer), moves up by keyboard: announced,
	// and the focus follows it.
	press(`[aria-label="Move Button: Read more up"]`)
	b.wait(`document.querySelector('[data-builder-said]').textContent === 'Button: Read more moved up to position 3 of 4 in row 1.'`)
	b.wait(`document.activeElement && document.activeElement.getAttribute('aria-label') === 'Move Button: Read more up'`)
	require.Equal(t, "heading,text,button,footer", b.str(`[...document.querySelectorAll('[data-block]')].map((e) => e.dataset.block).join()`))
	typeInto("Footer text", "Example Ltd")
	b.wait(`(() => { const f = document.querySelector('iframe[title="Preview of the blocks"]');
		return !!f && f.srcdoc.includes('brand-frame') && f.srcdoc.includes('Heading for Sample Subscriber') && f.srcdoc.includes('Read more</a>')
			&& f.srcdoc.includes('<!--[if mso | IE]>') && f.srcdoc.includes('Example Ltd'); })()`)
	require.Contains(t, b.str(`document.querySelector('[data-blocks-preview] pre').textContent`), "Read more: https://shop.example/")
	b.audit("campaign-builder")

	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844)))
	time.Sleep(200 * time.Millisecond)
	require.Equal(t, "true", b.str(`String(document.documentElement.scrollWidth <= window.innerWidth + 1)`), "no sideways scrolling on a phone")
	b.audit("campaign-builder-phone")
	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900)))

	press(`form[aria-label="New campaign"] button[type="submit"]`)
	b.wait(`/^#\/campaigns\/\d+$/.test(location.hash) && (document.querySelector('main h1') || {}).textContent === 'Built with blocks'`)
	id := strings.TrimPrefix(b.str(`location.hash`), "#/campaigns/")
	c := apiCall(t, base, key, http.MethodGet, "/v1/campaigns/"+id, nil)
	require.Equal(t, "blocks", c["content_type"])
	design, err := json.Marshal(c["blocks"])
	require.NoError(t, err)
	require.Contains(t, string(design), `{"text":"Read more","type":"button","url":"https://shop.example/"},{"text":"Example Ltd","type":"footer"}`)
	require.Contains(t, c["html_template"], `>Heading for {{.Name}}</h1>`)
	require.Contains(t, c["text_template"], "BRAND\n")
	// The campaign's page shows the message it will send.
	b.wait(`__t.text().includes('Read more: https://shop.example/')`)
	b.audit("campaign-blocks")
}
