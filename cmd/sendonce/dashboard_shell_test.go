package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
)

// shellRoutes are the pages the shell's checks walk, each with its heading.
var shellRoutes = [][2]string{{"#/overview", "Overview"}, {"#/campaigns", "Campaigns"}, {"#/campaigns/new", "New campaign"},
	{"#/sequences", "Sequences"}, {"#/subscribers", "Subscribers"}, {"#/lists", "Lists"}, {"#/templates", "Templates"},
	{"#/layouts", "Layouts"}, {"#/segments", "Segments"}, {"#/suppressions", "Suppressions"}, {"#/messages", "Messages"}, {"#/senders", "Senders"},
	{"#/endpoints", "Event endpoints"}, {"#/inbox", "Dev inbox"}, {"#/keys", "API keys"}}

// checkShell is TestDashboardProduct's shell subtest: the grouped sidebar at 1280
// px, the menu button at 390 px (aria-expanded, the focus moved in and given back,
// Escape and a followed link close it), one primary action per view in the page's
// header, relative times with the exact time on hover, toasts in a live region
// that was on the page before them, and the dark scheme (the system's, emulated)
// with axe-core's contrast rules passing on every page.
func checkShell(t *testing.T, b *pagesBrowser, call func(method, path string, body any) map[string]any) {
	call("POST", "/v1/lists", map[string]any{"name": "shell"})
	call("POST", "/v1/subscribers", map[string]any{"email": "shell@example.com", "status": "confirmed"})

	// 1280 px: the sidebar beside the page, its four groups in order, no menu button.
	b.open("#/segments", "Segments")
	require.Equal(t, `["Insights","Audience","Sending","Settings"]`,
		b.str(`JSON.stringify([...document.querySelectorAll('#sidebar h2')].map((h) => h.textContent))`))
	b.eval(`getComputedStyle(document.getElementById('sidebar')).display !== 'none'
		&& document.getElementById('sidebar').getBoundingClientRect().right <= document.querySelector('main').getBoundingClientRect().left
		&& document.querySelector('.menu-button').offsetParent === null`)
	require.Equal(t, "Segments", b.str(`document.querySelector('#sidebar a[aria-current=page]').textContent`))
	require.Equal(t, "Audience", b.str(`document.querySelector('#sidebar a[aria-current=page]').closest('ul').previousElementSibling.textContent`))

	// One primary action per view, in the page's header where the view has one
	// to offer first (a list's "New …"); secondary and destructive look otherwise.
	var many []string
	for _, r := range shellRoutes {
		b.open(r[0], r[1])
		time.Sleep(300 * time.Millisecond) // the page's lists arrive
		n := b.str(`String([...document.querySelectorAll('main .primary')].filter((e) => e.offsetParent !== null && !e.closest('dialog')).length)`)
		if n != "1" && !(n == "0" && (r[0] == "#/messages" || r[0] == "#/inbox")) {
			many = append(many, r[0]+": "+n)
		}
	}
	require.Empty(t, many, "views whose primary buttons are not exactly one (Messages and the dev inbox only read)")
	b.open("#/campaigns", "Campaigns")
	b.eval(`!!document.querySelector('.page-head .page-actions a.primary')`)
	b.open("#/subscribers", "Subscribers")
	require.NotEqual(t, b.str(`getComputedStyle(document.querySelector('main .primary')).backgroundColor`),
		b.str(`getComputedStyle(document.querySelector('main button[type=submit]:not(.primary)')).backgroundColor`),
		"a secondary button does not look like the primary one")

	// Relative times, the exact one on hover.
	b.wait(`!!document.querySelector('main table time')`)
	rel := b.str(`document.querySelector('main table time').textContent`)
	require.True(t, strings.Contains(rel, "ago") || rel == "just now", "a moment of this week reads relatively: %q", rel)
	require.Contains(t, b.str(`document.querySelector('main table time').title`), "20", "the exact time on hover")

	// A toast says a success, in the polite live region that was there before it.
	b.open("#/segments", "Segments")
	// (An earlier subtest's toast may still be showing: the region need not be empty.)
	b.eval(`window.__region = document.querySelector('.toasts[role=status][aria-live=polite]'); !!window.__region && !window.__region.textContent.includes('toasted')`)
	b.eval(`__t.fill('Name', 'toasted')`)
	b.eval(`__t.click('Save segment')`)
	b.wait(`window.__region.isConnected && window.__region.textContent.includes('Segment toasted saved.')`)

	// 390 px: the menu button opens the navigation and Escape closes it.
	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844)))
	defer func() { require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900))) }()
	b.open("#/overview", "Overview")
	b.wait(`document.querySelector('.menu-button').offsetParent !== null && getComputedStyle(document.getElementById('sidebar')).display === 'none'`)
	require.Equal(t, "false", b.str(`document.querySelector('.menu-button').getAttribute('aria-expanded')`))
	require.Equal(t, "sidebar", b.str(`document.querySelector('.menu-button').getAttribute('aria-controls')`))
	b.eval(`document.querySelector('.menu-button').click(); true`)
	b.wait(`document.querySelector('.menu-button').getAttribute('aria-expanded') === 'true' && getComputedStyle(document.getElementById('sidebar')).display !== 'none'`)
	b.wait(`!!document.activeElement.closest('#sidebar')`)
	b.eval(`document.scrollingElement.scrollWidth <= innerWidth`)
	b.audit("menu-open-phone")
	require.NoError(t, chromedp.Do(b.ctx, chromedp.KeyEvent(kb.Escape)))
	b.wait(`document.querySelector('.menu-button').getAttribute('aria-expanded') === 'false' && getComputedStyle(document.getElementById('sidebar')).display === 'none'`)
	b.wait(`document.activeElement === document.querySelector('.menu-button')`)
	b.eval(`document.querySelector('.menu-button').click(); true`)
	b.wait(`document.querySelector('.menu-button').getAttribute('aria-expanded') === 'true'`)
	b.eval(`[...document.querySelectorAll('#sidebar a')].find((a) => a.textContent === 'Lists').click(); true`)
	b.wait(`h1() === 'Lists' && document.querySelector('.menu-button').getAttribute('aria-expanded') === 'false'`)
	b.eval(`document.scrollingElement.scrollWidth <= innerWidth`)
	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900)))

	// Dark mode follows the system; every page keeps its contrast (axe-core).
	scheme := func(v string) {
		_, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
		require.NoError(t, err)
	}
	scheme("dark")
	defer scheme("light")
	for _, r := range shellRoutes {
		b.open(r[0], r[1])
		time.Sleep(300 * time.Millisecond)
		lum := b.str(`(() => { const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number); return String((0.2126 * r + 0.7152 * g + 0.0722 * b) / 255); })()`)
		var l float64
		_, err := fmt.Sscan(lum, &l)
		require.NoError(t, err)
		require.Less(t, l, 0.2, "%s is dark when the system is", r[0])
		b.audit("dark-" + strings.TrimPrefix(strings.ReplaceAll(r[0], "/", "-"), "#-"))
	}
}
