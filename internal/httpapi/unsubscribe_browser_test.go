package httpapi_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// chromium finds a Chromium binary or skips: the one environment where this test
// may not run is a developer's machine without a browser (`apt-get install -y
// chromium`). Under CI (CI set, as .ci/run sets it) a missing browser fails the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI is set but no chromium binary is on PATH: the browser test must run in CI")
	}
	t.Skip("no chromium binary on PATH: install it (Debian: apt-get install -y chromium) to run the browser test")
	return ""
}

// TestUnsubscribePageInBrowser opens the List-Unsubscribe link in a real headless
// Chromium, clicks the button, sees the confirmation and checks the suppression.
func TestUnsubscribePageInBrowser(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	e := setupOptout(t, "de")
	listA, listB := e.withLists(t)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	// The first action starts the browser and must not carry a timeout (it would
	// stop the browser); the later ones are bounded against a hung browser, which is
	// not a performance assertion.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.link())))
	step, cancelStep := context.WithTimeout(ctx, time.Minute)
	defer cancelStep()

	require.NoError(t, chromedp.Do(step, chromedp.WaitVisible(chromedp.ID("unsubscribe"))))
	before, err := chromedp.Run(step, chromedp.Text(chromedp.ID("unsubscribe")))
	require.NoError(t, err)
	require.Equal(t, "Von allem abmelden", before)
	reason, _ := e.suppressed(t)
	require.Empty(t, reason, "opening the page changes nothing")

	// Untick list A, save: A is left, B kept, nothing suppressed.
	require.NoError(t, chromedp.Do(step,
		chromedp.Click(chromedp.ID("list-"+itoa(listA))),
		chromedp.Click(chromedp.ID("save")),
		chromedp.WaitVisible(chromedp.ID("saved")),
	))
	saved, err := chromedp.Run(step, chromedp.Text(chromedp.ID("saved")))
	require.NoError(t, err)
	require.Equal(t, "Ihre Einstellungen sind gespeichert.", saved)
	status, _ := e.membership(t, listA)
	require.Equal(t, "unsubscribed", status)
	status, _ = e.membership(t, listB)
	require.Equal(t, "subscribed", status)
	reason, _ = e.suppressed(t)
	require.Empty(t, reason)

	require.NoError(t, chromedp.Do(step,
		chromedp.Click(chromedp.ID("unsubscribe")),
		chromedp.WaitVisible(chromedp.ID("done")),
	))
	after, err := chromedp.Run(step, chromedp.Text(chromedp.ID("done")))
	require.NoError(t, err)
	require.Equal(t, "Sie sind abgemeldet.", after)
	reason, _ = e.suppressed(t)
	require.Equal(t, "unsubscribe", reason)
}
