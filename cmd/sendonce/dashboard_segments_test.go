package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestDashboardSegmentsFilterAndPages: with 60 segments the Segments page shows
// 50, its pager reaches the other 10 and comes back; the name filter (a search
// form, applied a moment after typing) asks the API for the names holding the
// text, so a segment on the second page shows on the first when it matches,
// and a filter matching nothing says so. axe-clean on each view.
func TestDashboardSegmentsFilterAndPages(t *testing.T) {
	b, base, key, _ := signedIn(t, "segpages")
	for i := 1; i <= 60; i++ {
		name := fmt.Sprintf("segment %02d", i)
		if i%20 == 0 {
			name = fmt.Sprintf("VIP tier %02d", i)
		}
		apiCall(t, base, key, http.MethodPost, "/v1/segments", map[string]any{"name": name, "statuses": []string{"confirmed"}})
	}
	rows := `document.querySelectorAll('table.segments tbody tr').length`
	names := `[...document.querySelectorAll('table.segments tbody tr td:first-child')].map((td) => td.textContent).join('|')`

	b.open("#/segments", "Segments")
	b.wait(rows + ` === 50 && !!document.querySelector('nav.pager')`)
	require.Contains(t, b.str(names), "segment 01")
	require.NotContains(t, b.str(names), "VIP tier 60", "the 60th segment is on the second page")
	require.Contains(t, b.str(`document.querySelector('nav.pager').innerText`), "Page 1")
	b.audit("segments-page-1")

	b.eval(`__t.click('Next page')`)
	b.wait(rows + ` === 10 && document.querySelector('nav.pager').innerText.includes('Page 2')`)
	require.Contains(t, b.str(names), "VIP tier 60")
	require.NotContains(t, b.str(names), "segment 01")
	b.audit("segments-page-2")
	b.eval(`__t.click('Previous page')`)
	b.wait(rows + ` === 50 && document.querySelector('nav.pager').innerText.includes('Page 1')`)

	// The filter: any case, across pages, with no pager for three rows.
	b.wait(`!!document.querySelector('form[role=search]') && !!__t.field('Segment name contains')`)
	b.eval(`__t.fill('Segment name contains', 'vip')`)
	b.wait(rows + ` === 3 && !document.querySelector('nav.pager')`)
	require.Equal(t, "VIP tier 20|VIP tier 40|VIP tier 60", b.str(names))
	b.audit("segments-filtered")

	b.eval(`__t.fill('Segment name contains', 'no such segment')`)
	b.wait(`__t.text().includes("No segment's name contains that.") && !document.querySelector('table.segments')`)
	b.audit("segments-filtered-empty")

	// Cleared: every segment again, from the first page.
	b.eval(`__t.fill('Segment name contains', '')`)
	b.wait(rows + ` === 50 && document.querySelector('nav.pager').innerText.includes('Page 1')`)
}

// TestDashboardSegmentMembersPaged: a segment of a list's confirmed members (62 of
// them; 3 pending members and a confirmed subscriber outside the list left out)
// shows its exact count and its members 50 a page, oldest first, from
// GET /v1/segments/{id}/subscribers: the pager reaches the other 12 and comes back.
// axe-clean, and no sideways scroll at 390 px.
func TestDashboardSegmentMembersPaged(t *testing.T) {
	b, base, key, _ := signedIn(t, "segmembers")
	list := apiCall(t, base, key, http.MethodPost, "/v1/lists", map[string]any{"name": "members"})["id"]
	var rows []map[string]any
	for i := 1; i <= 65; i++ {
		status := "confirmed"
		if i > 62 {
			status = "pending"
		}
		rows = append(rows, map[string]any{"email": fmt.Sprintf("m%02d@example.com", i), "status": status})
	}
	apiCall(t, base, key, http.MethodPost, fmt.Sprintf("/v1/subscribers/import?list_id=%v", list), rows)
	apiCall(t, base, key, http.MethodPost, "/v1/subscribers", map[string]any{"email": "outside@example.com", "status": "confirmed"})
	seg := apiCall(t, base, key, http.MethodPost, "/v1/segments", map[string]any{"name": "list confirmed",
		"statuses": []string{"confirmed"}, "list_ids": []any{list}})["id"]

	tableRows := `document.querySelectorAll('table.segment-members tbody tr').length`
	addresses := `[...document.querySelectorAll('table.segment-members tbody tr td:first-child')].map((td) => td.textContent).join('|')`
	b.open(fmt.Sprintf("#/segments/%v", seg), "list confirmed")
	b.wait(tableRows + ` === 50 && !!document.querySelector('[data-members]') && !!document.querySelector('nav.pager')`)
	require.Equal(t, "62", b.str(`document.querySelector('[data-members]').dataset.members`))
	require.Equal(t, "true", b.str(`document.querySelector('[data-members]').dataset.exact`))
	require.Contains(t, b.str(`document.querySelector('[data-members]').textContent`), "62 subscribers match")
	first := b.str(addresses)
	require.True(t, strings.HasPrefix(first, "m01@example.com|m02@example.com"), first)
	require.NotContains(t, first, "outside@example.com")
	b.audit("segment-members-page-1")

	b.eval(`__t.click('Next page')`)
	b.wait(tableRows + ` === 12 && document.querySelector('nav.pager').innerText.includes('Page 2')`)
	second := b.str(addresses)
	require.True(t, strings.HasPrefix(second, "m51@example.com") && strings.HasSuffix(second, "m62@example.com"), second)
	require.NotContains(t, second, "m63@example.com", "a pending member is not in a confirmed segment")
	b.audit("segment-members-page-2")
	b.eval(`__t.click('Previous page')`)
	b.wait(tableRows + ` === 50 && document.querySelector('nav.pager').innerText.includes('Page 1')`)

	require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844)))
	defer func() { require.NoError(t, chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900))) }()
	b.open(fmt.Sprintf("#/segments/%v", seg), "list confirmed")
	b.wait(tableRows + ` === 50`)
	require.Equal(t, "true", b.str(`String(document.scrollingElement.scrollWidth <= innerWidth)`), "no sideways scrolling on a phone")
	b.audit("segment-members-phone")
}
