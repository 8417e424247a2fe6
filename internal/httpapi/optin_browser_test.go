package httpapi_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestConfirmPageInBrowser opens a confirmation link in a real headless Chromium:
// the page (in the list's language) changes nothing until its button is clicked,
// which confirms the address.
func TestConfirmPageInBrowser(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	o := setupOptin(t)
	l := o.doubleList(o.keyA, "Neuigkeiten", "de")
	res := o.form(o.pubA, "192.0.2.1:1", url.Values{"email": {"eve@example.com"}, "list_ids": {itoa(l.Id)}})
	require.Equal(t, 200, res.Status)
	var link string
	require.NoError(t, o.pool.QueryRow(context.Background(),
		`SELECT data->>'confirm_url' FROM messages WHERE to_email = 'eve@example.com'`).Scan(&link))
	srv := httptest.NewServer(o.handler)
	t.Cleanup(srv.Close)
	link = srv.URL + strings.TrimPrefix(link, "https://mail.example.com")

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	// The first action starts the browser and must not carry a timeout; the later
	// ones are bounded against a hung browser (no performance assertion).
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(link)))
	step, cancelStep := context.WithTimeout(ctx, time.Minute)
	defer cancelStep()
	require.NoError(t, chromedp.Do(step, chromedp.WaitVisible(chromedp.ID("confirm"))))
	button, err := chromedp.Run(step, chromedp.Text(chromedp.ID("confirm")))
	require.NoError(t, err)
	require.Equal(t, "Abonnement bestätigen", button)
	status, member := o.state("eve@example.com", l.Id)
	require.Equal(t, []string{"pending", "pending"}, []string{status, member}, "opening the page changes nothing")

	require.NoError(t, chromedp.Do(step, chromedp.Click(chromedp.ID("confirm")), chromedp.WaitVisible(chromedp.ID("confirmed"))))
	done, err := chromedp.Run(step, chromedp.Text(chromedp.ID("confirmed")))
	require.NoError(t, err)
	require.Equal(t, "Ihr Abonnement ist bestätigt.", done)
	status, member = o.state("eve@example.com", l.Id)
	require.Equal(t, []string{"confirmed", "subscribed"}, []string{status, member})
}
