package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
)

// TestDashboardSequences drives the sequence pages on a fresh database: the list's
// empty state; a new sequence whose trigger's list and steps' templates are chosen
// by name, its steps added, then moved and removed with the keyboard alone (the
// focus following the moved step), a wait's duration refused by the API
// and shown at that step's field (nothing created), then created; activated; a
// subscriber enrolled by address (an unknown address refused at the field, a second
// enrollment said to change nothing); the step's stats and the subscriber's
// timeline filled from the stream; paused, edited, resumed; a pause refused with 409
// after the sequence was archived elsewhere, explained in words; an event tracked
// from an event-triggered sequence's page; a draft deleted; the list with each
// one's status and counts. No JavaScript error, no serious or critical axe violation.
func TestDashboardSequences(t *testing.T) {
	bin, axe := chromiumPath(t), axeScript(t)
	base, cfg := pagesService(t, manyInFlight)
	b := newPagesBrowser(t, bin, axe)
	bg := context.Background()
	pool, err := openWithTimeout(bg, cfg)
	require.NoError(t, err)
	defer pool.Close()
	_, key, err := account.NewService(pool).Create(bg, "seqs")
	require.NoError(t, err)
	welcome := apiCall(t, base, key, http.MethodPost, "/v1/templates", map[string]any{"name": "welcome", "subject": "Welcome, {{.Name}}", "html": "<p>Glad you are here.</p>"})
	tips := apiCall(t, base, key, http.MethodPost, "/v1/templates", map[string]any{"name": "tips", "subject": "Three tips", "html": "<p>Tip one.</p>"})
	list := apiCall(t, base, key, http.MethodPost, "/v1/lists", map[string]any{"name": "newsletter"})
	ada := apiCall(t, base, key, http.MethodPost, "/v1/subscribers", map[string]any{"email": "ada@example.com", "name": "Ada", "status": "confirmed"})
	// Ada joins before the sequence is active (no trigger): she is enrolled by hand,
	// and being a member keeps her in the list-scoped sequence.
	apiCall(t, base, key, http.MethodPost, fmt.Sprintf("/v1/lists/%v/members", list["id"]), map[string]any{"subscriber_ids": []any{ada["id"]}})

	link, err := newLoginLink(bg, pool, "seqs", base)
	require.NoError(t, err)
	b.navigate(link)
	b.wait(`!!document.querySelector('nav')`)
	b.eval(pageHelpers)
	b.eval(`window.confirm = () => true; window.h1 = () => (document.querySelector('main h1') || {}).textContent; true`)

	b.open("#/sequences", "Sequences")
	b.wait(`__t.text().includes('No sequences yet.')`)
	b.audit("sequences-empty")

	// A new sequence: each trigger shows its own fields.
	b.eval(`__t.click('New sequence')`)
	b.wait(`h1() === 'New sequence'`)
	b.eval(`__t.fill('Sequence name', 'Welcome series')`)
	b.wait(`__t.choose('Trigger', 'event: your application tracks an event')`)
	b.wait(`!!__t.field('Event name') && !__t.field('Date attribute')`)
	b.wait(`__t.choose('Trigger', "date_attribute: a date in the subscriber's attributes")`)
	b.wait(`!!__t.field('Date attribute') && !!__t.field('Days after the date') && !__t.field('Event name')`)
	b.wait(`__t.choose('Trigger', 'segment_entered: a subscriber comes to match a segment')`)
	b.wait(`!!__t.field('Segment') && !__t.field('Date attribute')`)
	b.wait(`__t.choose('Trigger', 'list_joined: someone joins a list')`)
	b.wait(`__t.choose('List', 'newsletter')`)
	// Steps: send, wait, condition; the condition moved up, then removed.
	b.eval(`__t.click('Add step')`)
	b.wait(`__t.choose('Step 1 template', 'welcome')`)
	b.eval(`__t.fill('Step 1 From address', 'hello@example.com')`)
	b.wait(`__t.choose('New step', 'wait')`)
	b.eval(`__t.click('Add step')`)
	b.wait(`__t.fill('Step 2 duration', 'soon')`)
	b.wait(`__t.choose('New step', 'condition (exit when true)')`)
	b.eval(`__t.click('Add step')`)
	b.wait(`!!__t.field('Step 3 exit when')`)
	// With the keyboard alone (Enter and Space): the condition up twice (the focus
	// follows it, to "down" once it is first), down once, then removed.
	press := func(k string, focused string) {
		t.Helper()
		_, err := chromedp.Run(b.ctx, chromedp.KeyEvent(k))
		require.NoError(t, err)
		_, err = chromedp.Run(b.ctx, chromedp.Poll[bool](`document.activeElement && document.activeElement.getAttribute('aria-label') === `+fmt.Sprintf("%q", focused), chromedp.WithPollingTimeout(5*time.Second)))
		if err != nil {
			t.Fatalf("DIAG %s: active=%s legends=%s", focused, b.str(`document.activeElement.outerHTML.slice(0, 200)`), b.str(`[...document.querySelectorAll('li.step legend')].map((l) => l.textContent).join(' | ')`))
		}
		require.Equal(t, "true", b.str(`String(document.activeElement.matches(':focus-visible'))`), "the focus is visible on %s", focused)
	}
	legend := func(i int) string {
		return b.str(fmt.Sprintf(`document.querySelector('li.step[data-step="%d"] legend').textContent`, i))
	}
	b.eval(`document.querySelector('[aria-label="Move step 3 up"]').focus(); true`)
	press(kb.Enter, "Move step 2 up")
	require.Contains(t, legend(1), "condition")
	press(kb.Enter, "Move step 1 down")
	require.Contains(t, legend(0), "condition")
	press(" ", "Move step 2 down")
	require.Contains(t, legend(1), "condition")
	require.Equal(t, "soon", b.str(`__t.field('Step 3 duration').value`))
	b.eval(`document.querySelector('[aria-label="Remove step 2"]').focus(); true`)
	press(" ", "Remove step 2")
	b.wait(`document.querySelectorAll('li.step').length === 2 && __t.field('Step 2 duration').value === 'soon'`)
	require.Equal(t, "false", b.str(`String(!!document.querySelector('[aria-label="Move step 1 up"]:not([aria-disabled=true])'))`), "the first step cannot move up")
	// The API refuses the duration: its 422 shows at step 2's field, and nothing is created.
	b.eval(`__t.click('Create sequence')`)
	b.wait(`__t.field('Step 2 duration').getAttribute('aria-invalid') === 'true' && __t.field('Step 2 duration').parentElement.querySelector('.field-error').textContent.length > 0`)
	b.eval(`__t.field('Step 2 duration').scrollIntoView({ block: 'center' }); true`) // the screenshot shows the refused field
	b.audit("sequence-new")
	require.Equal(t, "[]", fmt.Sprint(apiCall(t, base, key, http.MethodGet, "/v1/sequences", nil)["data"]), "a refused sequence is not created")
	b.eval(`__t.fill('Step 2 duration', '1h')`)
	b.wait(`__t.choose('New step', 'send an email')`)
	b.eval(`__t.click('Add step')`)
	b.wait(`__t.choose('Step 3 template', 'tips')`)
	b.eval(`__t.fill('Step 3 From address', 'hello@example.com')`)
	// A clicked condition names an earlier email by its number and template.
	b.wait(`__t.choose('New step', 'condition (exit when true)')`)
	b.eval(`__t.click('Add step')`)
	b.wait(`__t.choose('Step 4 exit when', 'the subscriber clicked a link of an earlier email')`)
	b.wait(`__t.choose('Step 4 email clicked', 'Step 3: tips')`)
	b.eval(`__t.click('Create sequence')`)
	b.wait(`/^#\/sequences\/\d+$/.test(location.hash) && h1() === 'Welcome series'`)
	seqID := strings.TrimPrefix(b.str(`location.hash`), "#/sequences/")
	seq := apiCall(t, base, key, http.MethodGet, "/v1/sequences/"+seqID, nil)
	require.Equal(t, "draft", seq["status"])
	require.Equal(t, list["id"], seq["trigger"].(map[string]any)["list_id"])
	steps := seq["steps"].([]any)
	require.Len(t, steps, 4)
	require.Equal(t, welcome["id"], steps[0].(map[string]any)["template_id"])
	require.Equal(t, "1h", steps[1].(map[string]any)["duration"])
	require.Equal(t, tips["id"], steps[2].(map[string]any)["template_id"])
	require.EqualValues(t, 2, steps[3].(map[string]any)["if"].(map[string]any)["clicked"].(map[string]any)["step"])

	// Activate; enroll by address.
	b.eval(`__t.click('Activate')`)
	b.wait(`!!document.querySelector('[data-status=active]')`)
	b.wait(`__t.fill('Subscriber address', 'nobody@example.com')`)
	b.eval(`__t.click('Enroll')`)
	b.wait(`__t.field('Subscriber address').getAttribute('aria-invalid') === 'true'`)
	b.eval(`__t.fill('Subscriber address', 'ada@example.com')`)
	b.eval(`__t.click('Enroll')`)
	b.wait(`__t.text().includes('ada@example.com is enrolled.')`)
	// The first step's send, and Ada's timeline, arrive through the stream.
	b.wait(`document.querySelector('tr[data-step="0"] [data-kind=sent]').dataset.count === '1' && document.querySelector('tr[data-step="0"] [data-kind=entered]').dataset.count === '1'`)
	b.eval(`__t.fill('Subscriber address', 'ada@example.com')`)
	b.eval(`__t.click('Enroll')`)
	b.wait(`__t.text().includes('ada@example.com was already enrolled')`)
	b.eval(`__t.fill('Find by address', 'ADA@example.com')`)
	b.eval(`__t.click('Find')`)
	b.wait(`!!document.querySelector('details.enrollment[open] li[data-outcome=entered]') && !!document.querySelector('details.enrollment[open] li[data-outcome=sent]')`)
	require.Contains(t, b.str(`document.querySelector('table.sequence-stats').innerText`), `send "welcome" from hello@example.com`, "steps are described by their templates' names")
	b.eval(`document.getElementById('stats').scrollIntoView(); true`)
	b.audit("sequence")
	stats := apiCall(t, base, key, http.MethodGet, "/v1/sequences/"+seqID+"/stats", nil)
	require.EqualValues(t, 1, stats["enrollments"].(map[string]any)["active"])

	// Pause, change the name, resume.
	b.eval(`__t.click('Pause')`)
	b.wait(`!!document.querySelector('[data-status=paused]')`)
	b.eval(`document.querySelector('section[aria-labelledby=edit] summary').click(); true`)
	b.wait(`__t.fill('Sequence name', 'Welcome series (v2)')`)
	b.eval(`__t.click('Save sequence')`)
	b.wait(`h1() === 'Welcome series (v2)'`)
	b.eval(`__t.click('Resume')`)
	b.wait(`!!document.querySelector('[data-status=active]')`)
	// Archived elsewhere: the page still offers Pause, and the 409 is said in words.
	apiCall(t, base, key, http.MethodPost, "/v1/sequences/"+seqID+"/archive", nil)
	b.eval(`__t.click('Pause')`)
	b.wait(`!!document.querySelector('[data-conflict=yes]') && __t.text().includes('Only an active sequence can be paused; this sequence is archived now')`)
	b.wait(`!!document.querySelector('[data-status=archived]')`)

	// An event-triggered sequence: its page tracks the event as the application would.
	trial := apiCall(t, base, key, http.MethodPost, "/v1/sequences", map[string]any{"name": "Trial follow-up",
		"trigger": map[string]any{"type": "event", "event": "trial_started"},
		"steps": []any{map[string]any{"type": "wait_for_event", "event": "purchased", "timeout": "3d", "on_event": "exit"},
			map[string]any{"type": "send", "template_id": tips["id"], "from_email": "hello@example.com"}}})
	apiCall(t, base, key, http.MethodPost, fmt.Sprintf("/v1/sequences/%v/activate", trial["id"]), nil)
	b.open(fmt.Sprintf("#/sequences/%v", trial["id"]), "Trial follow-up")
	b.wait(`__t.text().includes('event trial_started') && __t.field('Event').value === 'trial_started'`)
	require.Equal(t, "false", b.str(`String(!!document.querySelector('[data-conflict]'))`), "another sequence's refusal is not shown on this one's page")
	b.eval(`__t.fill("Subscriber's address", 'ada@example.com')`)
	b.eval(`__t.click('Track event')`)
	b.wait(`__t.text().includes('Enrolled in 1 sequence; woke 0 waiting enrollments.')`)
	b.wait(`document.querySelector('tr[data-step="0"] [data-kind=entered]').dataset.count === '1'`)
	// A draft is deleted from its page.
	draft := apiCall(t, base, key, http.MethodPost, "/v1/sequences", map[string]any{"name": "Scratch",
		"trigger": map[string]any{"type": "manual"}, "steps": []any{map[string]any{"type": "wait", "duration": "1h"}}})
	b.open(fmt.Sprintf("#/sequences/%v", draft["id"]), "Scratch")
	b.eval(`__t.click('Delete draft')`)
	b.wait(`location.hash === '#/sequences' && h1() === 'Sequences'`)

	b.open("#/sequences", "Sequences")
	b.wait(`document.querySelectorAll('table.sequences tbody tr').length === 2 && !!document.querySelector('table.sequences [data-status=archived]') && !!document.querySelector('table.sequences [data-status=active]') && document.querySelectorAll('table.sequences [data-enrolled="1"]').length === 2`)
	require.NotContains(t, b.str(`__t.text()`), "Scratch")
	require.Contains(t, b.str(`__t.text()`), "joins newsletter")
	b.audit("sequences")
}
