package main

import (
	"fmt"
	"net/http"
	"testing"

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
