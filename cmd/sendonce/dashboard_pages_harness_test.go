package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/sender"
)

// pagesBrowser drives one headless Chromium tab the way TestDashboardJourney does:
// controls found by their label or text, any JavaScript error failing the test,
// axe-core on every page audited, and a screenshot of it under SENDONCE_SCREENSHOTS.
type pagesBrowser struct {
	t     *testing.T
	ctx   context.Context
	errs  *browserErrors
	axe   string
	shots bool
	axeIn bool
	// within bounds each wait (a minute unless a test says otherwise: a test made
	// to fail first fails sooner with less).
	within time.Duration
}

func newPagesBrowser(t *testing.T, bin, axe string) *pagesBrowser {
	t.Helper()
	return newPagesBrowserFor(t, bin, axe, 5*time.Minute)
}

// newPagesBrowserFor is newPagesBrowser whose actions, all together, may take up to total.
func newPagesBrowserFor(t *testing.T, bin, axe string, total time.Duration) *pagesBrowser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	// The first action starts the browser and carries no timeout; the later ones are
	// bounded against a hung browser (no performance assertion).
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	_, err := chromedp.Call(ctx, log.Enable, struct{}{})
	require.NoError(t, err)
	b := &pagesBrowser{t: t, errs: &browserErrors{}, axe: axe, shots: os.Getenv("SENDONCE_SCREENSHOTS") != "", within: time.Minute}
	b.errs.watch(ctx)
	step, cancelStep := context.WithTimeout(ctx, total)
	t.Cleanup(cancelStep)
	b.ctx = step
	return b
}

func (b *pagesBrowser) navigate(url string) {
	b.t.Helper()
	require.NoError(b.t, chromedp.Do(b.ctx, chromedp.Navigate(url)))
}

// eval runs js, which must answer true (a control the page lacks answers false).
func (b *pagesBrowser) eval(js string) {
	b.t.Helper()
	ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
	require.NoError(b.t, err, js)
	require.True(b.t, ok, "the page has no control for: %s", js)
}

func (b *pagesBrowser) wait(js string) {
	b.t.Helper()
	// A condition that throws (an element not there yet) is false, not a page error.
	_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`(() => { try { return !!(`+js+`); } catch (e) { return false; } })()`,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(b.within)))
	if err != nil {
		text, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText`))
		b.t.Fatalf("waiting for %s: %v\nerrors: %v\nthe page says:\n%s", js, err, b.errs.all(), text)
	}
}

// fits waits for the page to lay out within the viewport's width (it lays out
// again after a viewport change) and, when it never does, fails naming the
// elements that reach past the viewport's right edge, with their widths and
// text, so a page that scrolls sideways says why.
func (b *pagesBrowser) fits(name string) {
	b.t.Helper()
	const fits = `document.documentElement.scrollWidth <= innerWidth + 1`
	_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](fits,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(b.within)))
	if err == nil {
		return
	}
	wide := b.str(`(() => {
		const out = [];
		for (const el of document.querySelectorAll('body *')) {
			const r = el.getBoundingClientRect();
			if (r.right > innerWidth + 1 && r.width > 0) {
				out.push(el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).replace(/ /g, '.') : '') +
					' right=' + Math.round(r.right) + ' width=' + Math.round(r.width) + ' min=' + el.scrollWidth + ' "' +
					(el.textContent || '').trim().slice(0, 80) + '"');
			}
		}
		return 'scrollWidth ' + document.documentElement.scrollWidth + ' > innerWidth ' + innerWidth + '\n' + out.slice(0, 25).join('\n');
	})()`)
	b.t.Fatalf("%s scrolls sideways at %s px: %v\n%s", name, b.str(`String(innerWidth)`), err, wide)
}

func (b *pagesBrowser) str(js string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	require.NoError(b.t, err, js)
	return v
}

func (b *pagesBrowser) open(hash, heading string) {
	b.t.Helper()
	b.eval(fmt.Sprintf(`location.hash = %q; true`, hash))
	b.wait(fmt.Sprintf(`(document.querySelector('main h1') || {}).textContent === %q`, heading))
}

// audit fails on any JavaScript error so far and on an axe-core violation of
// impact serious or critical; with SENDONCE_SCREENSHOTS it saves the viewport.
func (b *pagesBrowser) audit(name string) {
	b.t.Helper()
	b.t.Logf("audit %s", name)
	if b.shots && pagesScreenshots[name] {
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		require.NoError(b.t, err)
		require.NoError(b.t, os.MkdirAll("../../docs/img", 0o755))
		require.NoError(b.t, os.WriteFile("../../docs/img/dashboard-"+name+".png", png, 0o644))
	}
	require.Empty(b.t, b.errs.all(), "JavaScript errors on %s", name)
	if b.axe == "" {
		return
	}
	if !b.axeIn {
		_, err := chromedp.Run(b.ctx, chromedp.Evaluate[chromedp.Void](b.axe))
		require.NoError(b.t, err)
		b.axeIn = true
	}
	found, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
		r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
		 .map((v) => v.impact + ' ' + v.id + ': ' + v.help + ' at ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`, chromedp.EvalAwaitPromise))
	require.NoError(b.t, err)
	require.Empty(b.t, found, "accessibility violations on %s", name)
}

// pagesScreenshots are the pages whose screenshots docs/dashboard.md shows.
var pagesScreenshots = map[string]bool{"sequences": true, "sequence-new": true, "sequence": true, "campaign-engagement": true, "domain-check": true, "senders": true, "messages": true, "message": true, "sender": true, "endpoint": true, "list": true, "subscriber": true,
	"menu-open-phone": true, "dark-campaigns": true, "segment-members": true, "segments-edit": true}

// pagesService runs the real service as `sendonce dev` configures it for a
// developer's machine: deliveries and senders may reach loopback over http (the
// fakes below), and a key ring encrypts sender credentials. Each of opts may change
// the configuration before the service starts (a test's own DNS resolver).
func pagesService(t *testing.T, opts ...func(*config.Config)) (base string, cfg config.Config) {
	t.Helper()
	cfg = config.Default()
	cfg.DatabaseURL = dbtest.URL(t)
	cfg.Addr = "127.0.0.1:0"
	cfg.MediaDir = t.TempDir() // fs storage, the default: never the source tree
	cfg.LogLevel = "warn"
	cfg.UnsubscribeSecret = []string{"k1:a-test-secret-0123456789abcdef"}
	cfg.SecretsKey = []string{sender.NewKeyRingEntry("t1")}
	cfg.Dev = true
	cfg.Tick = time.Second
	cfg.APIRatePerSecond = 0
	cfg.EventAllowPrivate = true
	cfg.EventAllowHTTP = true
	cfg.EventStreamPoll = 100 * time.Millisecond
	for _, o := range opts {
		o(&cfg)
	}
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

// manyInFlight lets the API serve a browser's parallel requests (a page loads its
// lists, templates and stats at once) beside the test's own calls on a busy test
// machine: being shed with 503 is not what these tests are about.
func manyInFlight(c *config.Config) { c.APIMaxInFlight = 64 }

// sendMessage posts a transactional message with the key (Idempotency-Key required).
func sendMessage(t *testing.T, base, key, idem string, body map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+"/v1/messages", bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idem)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "%v", out)
	return out
}

// signedIn is a dashboard test's start: the service as pagesService runs it
// (manyInFlight), an account named name with its key, a pool on the service's
// database (closed at cleanup), and a browser signed in to the account by a login
// link with the page helpers loaded.
func signedIn(t *testing.T, name string) (b *pagesBrowser, base, key string, pool *pgxpool.Pool) {
	t.Helper()
	bin, axe := chromiumPath(t), axeScript(t)
	base, cfg := pagesService(t, manyInFlight)
	b = newPagesBrowser(t, bin, axe)
	bg := context.Background()
	pool, err := openWithTimeout(bg, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, key, err = account.NewService(pool).Create(bg, name)
	require.NoError(t, err)
	link, err := newLoginLink(bg, pool, name, base)
	require.NoError(t, err)
	b.navigate(link)
	b.wait(`!!document.querySelector('nav')`)
	b.eval(pageHelpers)
	return b, base, key, pool
}
