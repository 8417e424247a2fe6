package largeaccount

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/session"
)

// countFetches runs in every document before the page's own scripts: it counts the
// API requests in flight, so a page is known to have its data.
const countFetches = `window.__inflight = 0;
(() => { const f = window.fetch; window.fetch = (...a) => { window.__inflight++;
  return f(...a).finally(() => { window.__inflight--; }); }; })();`

// quietMs is how long a page must stay without an API request in flight to count
// as settled: longer than the dashboard's debounces (a live count 300 ms after
// the last change), so a request a page starts a moment after its first render
// is waited for.
const quietMs = 400

// settled answers, in the page, the milliseconds from the start of its navigation
// to the moment it showed its heading with no API request in flight, once that
// lasted quiet ms (a page starts its requests after its first render); -1 after
// 60 s.
const settled = `new Promise((resolve) => {
  let since = null;
  const tick = () => {
    const now = performance.now();
    const busy = window.__inflight > 0 || !document.querySelector('main h1');
    if (busy) since = null; else if (since === null) since = now;
    if (since !== null && now - since >= %d) return resolve(since);
    if (now > 60000) return resolve(-1);
    setTimeout(tick, 5);
  };
  tick();
})`

// pageTimes opens the dashboard in headless Chromium (chromium: its path), signed
// in to the account by a login link, loads each page reps times (a full load of
// the page, its modules from the browser's cache) and prints the median and the
// slowest time to its data shown.
func pageTimes(ctx context.Context, chromium, base, key string, pool *pgxpool.Pool, accountID int64, reps int, stdout io.Writer) error {
	var ids struct{ campaign, subscriber, list, message, segment string }
	var page1 struct {
		Data []map[string]any `json:"data"`
	}
	pick := func(path string) (string, error) {
		page1.Data = nil
		if err := getJSON(ctx, base, key, path, &page1); err != nil {
			return "", err
		}
		if len(page1.Data) == 0 {
			return "", fmt.Errorf("largeaccount: %s is empty", path)
		}
		return fmt.Sprint(page1.Data[len(page1.Data)/2]["id"]), nil
	}
	var err error
	if ids.campaign, err = pick("/v1/campaigns?order=newest&limit=50&status=sent"); err != nil {
		return err
	}
	if ids.subscriber, err = pick("/v1/subscribers?limit=50&email=user5"); err != nil {
		return err
	}
	if ids.list, err = pick("/v1/lists?limit=1"); err != nil {
		return err
	}
	if ids.message, err = pick("/v1/messages?limit=50&order=newest"); err != nil {
		return err
	}
	if ids.segment, err = pick("/v1/segments?limit=50&name=" + url.QueryEscape(benchSegmentName)); err != nil {
		return err
	}
	token, _, err := session.NewService(pool, account.NewService(pool)).NewLoginLink(ctx, accountID)
	if err != nil {
		return err
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1280, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	// The first action starts the browser.
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		return fmt.Errorf("largeaccount: starting Chromium: %w", err)
	}
	if _, err := chromedp.Call(bctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: countFetches}); err != nil {
		return err
	}
	signIn, cancelSignIn := context.WithTimeout(bctx, 90*time.Second)
	defer cancelSignIn()
	if err := chromedp.Do(signIn, chromedp.Navigate(session.LinkURL(base, token))); err != nil {
		return fmt.Errorf("largeaccount: signing in to the dashboard: %w", err)
	}
	if _, err := chromedp.Run(signIn, chromedp.Poll[bool](`!!document.querySelector('nav') && location.hash !== '' && !location.hash.startsWith('#/login')`,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		return fmt.Errorf("largeaccount: signing in to the dashboard: %w", err)
	}
	pages := []string{"overview", "campaigns", "campaigns/" + ids.campaign, "campaigns/new", "subscribers",
		"subscribers/" + ids.subscriber, "messages", "messages/" + ids.message, "lists", "lists/" + ids.list,
		"segments", "segments/" + ids.segment, "templates", "suppressions"}
	fmt.Fprintf(stdout, "# each page loaded %d times in headless Chromium (1280 × 900), after one unmeasured load: milliseconds"+
		" from navigation to its heading shown with no API request in flight for %d ms\n", reps, quietMs)
	fmt.Fprintf(stdout, "%-30s %8s %8s\n", "page", "p50", "max")
	for _, p := range pages {
		var times []float64
		for i := 0; i <= reps; i++ {
			step, cancelStep := context.WithTimeout(bctx, 90*time.Second)
			// From a blank page, so each is a full load (not a change of fragment).
			err := chromedp.Do(step, chromedp.Navigate("about:blank"), chromedp.Navigate(base+"/app#/"+p))
			var ms float64
			if err == nil {
				ms, err = chromedp.Run(step, chromedp.Evaluate[float64](fmt.Sprintf(settled, quietMs), chromedp.EvalAwaitPromise))
			}
			cancelStep()
			if err != nil {
				return fmt.Errorf("largeaccount: page %s: %w", p, err)
			}
			if ms < 0 {
				return fmt.Errorf("largeaccount: page %s did not settle within 60 s", p)
			}
			if i > 0 {
				times = append(times, ms)
			}
		}
		slices.Sort(times)
		fmt.Fprintf(stdout, "%-30s %8.0f %8.0f\n", "#/"+p, times[len(times)/2], times[len(times)-1])
	}
	return nil
}
