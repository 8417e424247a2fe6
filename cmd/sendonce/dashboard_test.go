package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
)

// browserErrors collects what the page reported as an error: uncaught exceptions,
// console.error calls, and browser log entries of level error other than network
// answers (a 401 before signing in, a 409 the page explains, are expected).
type browserErrors struct {
	mu   sync.Mutex
	list []string
}

func (b *browserErrors) add(s string) { b.mu.Lock(); b.list = append(b.list, s); b.mu.Unlock() }
func (b *browserErrors) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.list...)
}

func (b *browserErrors) watch(ctx context.Context) {
	console := chromedp.Events(ctx, runtime.ConsoleAPICalled)
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	logs := chromedp.Events(ctx, log.EntryAdded)
	go func() {
		for ev, err := range console {
			if err != nil {
				return
			}
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				b.add("console.error: " + strings.Join(parts, " "))
			}
		}
	}()
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			b.add("exception: " + msg)
		}
	}()
	go func() {
		for ev, err := range logs {
			if err != nil {
				return
			}
			if e := ev.Entry; e.Level == log.EntryLevelError && e.Source != log.EntrySourceNetwork {
				b.add(fmt.Sprintf("log %s: %s %s", e.Source, e.Text, e.URL))
			}
		}
	}()
}

// dashboardService runs the real service (API and executor, the log provider, as
// `sendonce dev` configures it) with sending throttled so a campaign of a thousand
// takes seconds, long enough to watch it move.
func dashboardService(t *testing.T) (base string, cfg config.Config) {
	t.Helper()
	cfg = config.Default()
	cfg.DatabaseURL = dbtest.URL(t)
	cfg.Addr = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	cfg.UnsubscribeSecret = []string{"k1:a-test-secret-0123456789abcdef"}
	cfg.Dev = true
	cfg.Tick = time.Second
	cfg.AccountRatePerSecond = 30 // 600 recipients: about 20 s
	cfg.APIRatePerSecond = 0
	cfg.APIMaxInFlight = 64 // a browser's parallel requests on a busy test machine: not what this test is about
	cfg.EventStreamPoll = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, cfg, Options{API: true, Executor: true, OnListen: func(a net.Addr) { addrc <- a }}, testWriter{t}, testWriter{t})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	select {
	case a := <-addrc:
		base = "http://" + a.String()
	case err := <-done:
		t.Fatalf("run returned early: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("service did not listen within 30s")
	}
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond)
	return base, cfg
}

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI is set but no chromium binary is on PATH: the dashboard test must run in CI")
	}
	t.Skip("no chromium binary on PATH (Debian: apt-get install -y chromium)")
	return ""
}

// axeScript is axe-core, from the file AXE_CORE_PATH names (.ci/run installs it
// with npm; it is not part of the repository). Under CI a missing file fails.
func axeScript(t *testing.T) string {
	t.Helper()
	p := os.Getenv("AXE_CORE_PATH")
	if p == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but AXE_CORE_PATH is not: the accessibility check must run in CI")
		}
		t.Log("AXE_CORE_PATH is not set: no accessibility check (npm install axe-core; AXE_CORE_PATH=…/axe.min.js)")
		return ""
	}
	b, err := os.ReadFile(p)
	require.NoError(t, err, "AXE_CORE_PATH")
	return string(b)
}

// apiCall is a request with the demo key, for the few things the journey sets up
// around the browser (the template, the CSV file) and for checking the browser's
// results against the API.
func apiCall(t *testing.T, base, key, method, path string, body any) map[string]any {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, base+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	require.Less(t, resp.StatusCode, 300, "%s %s: %v", method, path, out)
	return out
}

// pageHelpers finds controls the way a person does, by their label or their text,
// so a control without a label cannot be driven.
const pageHelpers = `window.__t = {
  field(label) {
    const l = [...document.querySelectorAll('label')].find((l) => l.textContent.trim().startsWith(label));
    return l && l.htmlFor ? document.getElementById(l.htmlFor) : null;
  },
  fill(label, v) {
    const el = this.field(label);
    if (!el) return false;
    const proto = el.tagName === 'TEXTAREA' ? HTMLTextAreaElement.prototype : el.tagName === 'SELECT' ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, v);
    el.dispatchEvent(new Event(el.tagName === 'SELECT' ? 'change' : 'input', { bubbles: true }));
    return true;
  },
  choose(label, text) {
    const el = this.field(label);
    const o = el && [...el.options].find((o) => o.textContent.trim() === text);
    return o ? this.fill(label, o.value) : false;
  },
  click(text) {
    const b = [...document.querySelectorAll('button, a')].find((b) => b.textContent.trim() === text && !b.disabled);
    if (!b) return false;
    b.click();
    return true;
  },
  text() { return document.body.innerText; },
};
window.__pcts = [];
new MutationObserver(() => {
  for (const e of document.querySelectorAll('.card [data-percent]')) {
    const p = Number(e.dataset.percent);
    if (window.__pcts[window.__pcts.length - 1] !== p) window.__pcts.push(p);
  }
}).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-percent'] });
true`

// TestDashboardJourney drives the dashboard in headless Chromium through the whole
// journey a newcomer makes on a fresh database: sign in with the login link, import
// a 1,000-row CSV (progress shown, summary right), make a segment (its live count
// matches the API), create a campaign from a template (audience count), preview,
// test send, approve through its confirmation, pause and resume, watch the overview's progress bar reach
// 100 % through intermediate values fed by the event stream, find a recipient in
// the sends table, suppress an address, read the dev inbox, and sign out. Any
// JavaScript error fails it, and so does an axe-core violation of impact serious or
// critical on any page. With SENDONCE_SCREENSHOTS=1 it writes docs/img/dashboard-*.png.
func TestDashboardJourney(t *testing.T) {
	bin := chromiumPath(t)
	axe := axeScript(t)
	base, cfg := dashboardService(t)
	shots := os.Getenv("SENDONCE_SCREENSHOTS") != ""

	bg := context.Background()
	pool, err := openWithTimeout(bg, cfg)
	require.NoError(t, err)
	defer pool.Close()
	_, key, err := account.NewService(pool).Create(bg, "demo")
	require.NoError(t, err)
	// The template the campaign is made from (the dashboard has no template editor yet).
	tpl := apiCall(t, base, key, http.MethodPost, "/v1/templates", map[string]any{"name": "welcome",
		"subject": "Hello {{.Name}}", "text": "Hi {{.Name}}, you are on {{.Attributes.plan}}. Leave: {{.UnsubscribeURL}}",
		"html": `<p>Hi {{.Name}}, you are on {{.Attributes.plan}}.</p><p><a href="{{.UnsubscribeURL}}">Unsubscribe</a></p>`})
	var csv strings.Builder
	csv.WriteString("email,name,status,plan\n")
	for i := range 1000 {
		plan := "free"
		if i%5 < 3 {
			plan = "pro"
		}
		fmt.Fprintf(&csv, "user%04d@example.com,User %d,confirmed,%s\n", i, i, plan)
	}
	csv.WriteString("not an address,Bad,confirmed,pro\n")
	csvPath := filepath.Join(t.TempDir(), "subscribers.csv")
	require.NoError(t, os.WriteFile(csvPath, []byte(csv.String()), 0o600))
	link, err := newLoginLink(bg, pool, "demo", base)
	require.NoError(t, err)
	require.Contains(t, link, "/app#/login/")

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(bg, opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	var errs browserErrors
	// The first action starts the browser and carries no timeout; the later ones are
	// bounded against a hung browser (no performance assertion).
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	_, err = chromedp.Call(ctx, log.Enable, struct{}{})
	require.NoError(t, err)
	errs.watch(ctx)
	// Each wait has its own bound, the whole test a loose one (one budget for every
	// step runs out at the last steps on a loaded machine, and the failure then
	// reads as an empty page).
	step, cancelStep := context.WithTimeout(ctx, 12*time.Minute)
	defer cancelStep()

	eval := func(js string) {
		t.Helper()
		ok, err := chromedp.Run(step, chromedp.Evaluate[bool](js))
		require.NoError(t, err, js)
		require.True(t, ok, "the page has no control for: %s", js)
	}
	wait := func(js string) {
		t.Helper()
		_, err := chromedp.Run(step, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(90*time.Second)))
		if err != nil {
			text, _ := chromedp.Run(step, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("waiting for %s: %v\nthe page says:\n%s", js, err, text)
		}
	}
	str := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(step, chromedp.Evaluate[string](js))
		require.NoError(t, err, js)
		return v
	}
	open := func(hash, heading string) {
		t.Helper()
		eval(fmt.Sprintf(`location.hash = %q; true`, hash))
		wait(fmt.Sprintf(`document.querySelector('main h1') && document.querySelector('main h1').textContent === %q`, heading))
	}
	checked := map[string]bool{}
	audit := func(name string) {
		t.Helper()
		if shots {
			png, err := chromedp.Run(step, chromedp.CaptureScreenshot()) // the viewport, as a person sees it
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll("../../docs/img", 0o755))
			require.NoError(t, os.WriteFile("../../docs/img/dashboard-"+name+".png", png, 0o644))
		}
		require.Empty(t, errs.all(), "JavaScript errors on %s", name)
		if axe == "" {
			return
		}
		if !checked["axe"] {
			_, err := chromedp.Run(step, chromedp.Evaluate[chromedp.Void](axe))
			require.NoError(t, err)
			checked["axe"] = true
		}
		found, err := chromedp.Run(step, chromedp.Evaluate[[]string](`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
			r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
			 .map((v) => v.impact + ' ' + v.id + ': ' + v.help + ' at ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`, chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		require.Empty(t, found, "accessibility violations on %s", name)
	}

	// Sign in with the login link; its token leaves the address bar at once.
	require.NoError(t, chromedp.Do(step, chromedp.Navigate(link)))
	wait(`!!document.querySelector('nav')`)
	require.NotContains(t, str(`location.href`), "sol_", "the login token is gone from the address bar")
	eval(pageHelpers)
	open("#/overview", "Overview")
	wait(`__t.text().includes('Nothing is sending right now.') && __t.text().includes('own: mail leaves')`)
	audit("overview-empty")

	// Import 1,000 rows and a bad one: upload progress, then the import's summary.
	open("#/subscribers", "Subscribers")
	require.NoError(t, chromedp.Do(step, chromedp.SetUploadFiles(chromedp.CSS(`input[type=file]`), []string{csvPath})))
	eval(`__t.click('Import')`)
	wait(`!!document.querySelector('[data-import=done]')`)
	require.Equal(t, "1000", str(`document.querySelector('[data-inserted]').dataset.inserted`))
	require.Equal(t, "1", str(`document.querySelector('[data-rejected]').dataset.rejected`))
	require.Equal(t, "true", str(`String(!!document.querySelector('progress') && document.querySelector('progress').value === document.querySelector('progress').max)`))
	require.Contains(t, str(`__t.text()`), "not an address")
	audit("subscribers")

	// A segment, with its live count as the predicate is typed: the API's count.
	open("#/segments", "Segments")
	eval(`__t.fill('Name', 'pro plans')`)
	eval(`__t.fill('Match', '$.plan == "pro"')`)
	want := apiCall(t, base, key, http.MethodPost, "/v1/segments/preview", map[string]any{"match": `$.plan == "pro"`, "statuses": []string{"confirmed"}})["count"]
	require.EqualValues(t, 600, want)
	wait(`document.querySelector('[data-count]').dataset.count === '600'`)
	eval(`__t.fill('Match', '$.plan == ')`) // a predicate being typed: its error shows at the field
	wait(`!!document.querySelector('.field-error')`)
	eval(`__t.fill('Match', '$.plan == "pro"')`)
	wait(`document.querySelector('[data-count]').dataset.count === '600'`)
	eval(`__t.click('Save segment')`)
	wait(`__t.text().includes('pro plans')`)
	audit("segments")

	// The template editor: a broken template is refused with its error at the line it is
	// on; the saved one renders with the sample data.
	open("#/templates", "Templates")
	wait(`__t.click('welcome')`)
	wait(`!!document.querySelector('[data-rendered]')`)
	eval(`__t.fill('HTML', '<p>Hi {{.Name}}</p>\n<p>{{.Attributes.plan</p>')`)
	eval(`__t.click('Save and preview')`)
	wait(`!!document.querySelector('.error-line') && document.querySelector('.error-line').textContent.startsWith('2: ')`)
	eval(fmt.Sprintf(`__t.fill('HTML', %q)`, tpl["html"]))
	eval(`__t.click('Save and preview')`)
	wait(`!document.querySelector('.field-error') && !!document.querySelector('[data-rendered]')`)
	audit("templates")

	// A campaign from the template, to the segment: the audience count, a preview, a test send.
	open("#/campaigns/new", "New campaign")
	eval(`__t.fill('Name', 'November news')`)
	eval(`__t.fill('From address', 'news@example.com')`)
	wait(`__t.choose('Template', 'welcome')`)
	wait(`__t.choose('Segment', 'pro plans')`)
	wait(`document.querySelector('[data-audience]').dataset.audience === '600'`)
	audit("campaign-new")
	eval(`__t.click('Create draft')`)
	wait(`/^#\/campaigns\/\d+$/.test(location.hash) && !!document.querySelector('[data-status=draft]')`)
	campaignHash := str(`location.hash`)
	eval(`__t.fill('As subscriber', 'user0003@example.com')`)
	eval(`__t.click('Preview')`)
	wait(`!!document.querySelector('[data-preview=ready]')`)
	require.Contains(t, str(`document.querySelector('.preview').innerText`), "Hello User 3")
	eval(`__t.fill('To (up to 10', 'me@example.com')`)
	eval(`__t.click('Send test')`)
	wait(`__t.text().includes('me@example.com: sent')`)
	audit("campaign-draft")

	// Approve, pause while it sends, resume.
	eval(`__t.click('Approve and send now')`)
	// Approving asks first, with the audience the form showed.
	wait(`!!document.querySelector('dialog[open]') && (document.querySelector('[data-approve-audience]') || {dataset: {}}).dataset.approveAudience === '600'`)
	audit("campaign-approve")
	eval(`__t.click('Approve and send')`)
	wait(`!!document.querySelector('[data-status=sending]') && [...document.querySelectorAll('button')].some((b) => b.textContent === 'Pause')`)
	eval(`__t.click('Pause')`)
	wait(`!!document.querySelector('.tag[data-status=paused]')`)
	paused := str(`document.querySelector('.progress').dataset.percent`)
	require.NotEqual(t, "100", paused, "paused before the end")
	eval(`__t.click('Resume')`)
	wait(`!!document.querySelector('.tag[data-status=sending]') || !!document.querySelector('.tag[data-status=sent]')`)

	// The overview's bar reaches 100 % through values in between, fed by the stream.
	open("#/overview", "Overview")
	wait(`!!document.querySelector('.card [data-percent]')`)
	audit("overview-sending")
	wait(`document.querySelector('.card [data-percent]') && document.querySelector('.card [data-percent]').dataset.percent === '100'`)
	pcts, err := chromedp.Run(step, chromedp.Evaluate[[]int](`window.__pcts`))
	require.NoError(t, err)
	between := 0
	for _, p := range pcts {
		if p > 0 && p < 100 {
			between++
		}
	}
	require.GreaterOrEqual(t, between, 2, "the bar moved through values between 0 and 100: %v", pcts)
	require.Equal(t, 100, pcts[len(pcts)-1])
	require.NotEqual(t, "", str(`document.documentElement.dataset.streamEvents || ''`), "the progress came from stream events")

	// The sends table finds a recipient by address.
	open(campaignHash, "November news")
	wait(`!!document.querySelector('.tag[data-status=sent]')`)
	eval(`__t.fill('Address', 'User0007@Example.com')`)
	eval(`__t.click('Search')`)
	wait(`__t.text().includes('Found User0007@Example.com.') && document.querySelector('table.sends').innerText.includes('user0007@example.com') && document.querySelectorAll('table.sends tbody tr').length === 1`)
	audit("campaign-sent")

	// Suppress an address.
	open("#/suppressions", "Suppressions")
	eval(`__t.fill('Address', 'user0009@example.com')`)
	eval(`__t.click('Suppress')`)
	wait(`__t.text().includes('user0009@example.com')`)
	sup := apiCall(t, base, key, http.MethodGet, "/v1/suppressions", nil)
	require.Contains(t, fmt.Sprint(sup["data"]), "user0009@example.com")
	audit("suppressions")

	// The dev inbox shows what the log provider "sent" (the last 200: the campaign's
	// own messages have pushed the test send out).
	open("#/inbox", "Dev inbox")
	wait(`document.querySelectorAll('button.message').length === 200`)
	eval(`document.querySelector('button.message').click(); true`)
	wait(`!!document.querySelector('.message-view iframe[data-loaded]')`)
	require.Contains(t, str(`document.querySelector('.message-view').innerText`), "List-Unsubscribe")
	audit("inbox")

	open("#/keys", "API keys")
	eval(`__t.fill('Name of a new key', 'ci')`)
	eval(`__t.click('Create key')`)
	wait(`__t.text().includes('copy it now')`)
	audit("keys")

	// A phone-width screen.
	require.NoError(t, chromedp.Do(step, chromedp.EmulateViewport(390, 844)))
	open("#/campaigns", "Campaigns")
	wait(`__t.text().includes('November news')`)
	audit("campaigns-phone")
	require.NoError(t, chromedp.Do(step, chromedp.EmulateViewport(1280, 900)))

	// Sign out: the session is over for the server too.
	eval(`__t.click('Sign out')`)
	wait(`!!document.querySelector('main.signin') && __t.text().includes('You are signed out.')`)
	status, err := chromedp.Run(step, chromedp.Evaluate[int](`fetch('/v1/account').then((r) => r.status)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, status)
	audit("signin")
}
