// Package typescript_test tests the TypeScript package (@sendonce/client) where Node
// cannot: in a browser. The package's own tests run on Node (npm test, make ts).
package typescript_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m, false, nil) }

// need finds a tool the test needs or skips; under CI (CI set, as .ci/run sets it) a
// missing tool fails the test instead.
func need(t *testing.T, why string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set but none of %v is on PATH: %s", names, why)
	}
	t.Skipf("none of %v on PATH (%s)", names, why)
	return ""
}

// pack runs `npm pack` here (its prepack builds dist/ with tsc) and unpacks the
// tarball into a new folder, returning it (the package's root) and the tarball's
// file names. It needs the package's tools installed (npm ci: make ts does it).
func pack(t *testing.T) (string, []string) {
	t.Helper()
	need(t, "the package is packed with npm", "npm")
	if _, err := os.Stat("node_modules/.bin/tsc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but sdk/typescript/node_modules is not installed: make ts installs it")
		}
		t.Skip("sdk/typescript/node_modules is not installed: run make ts")
	}
	dest := t.TempDir()
	cmd := exec.Command("npm", "pack", "--pack-destination", dest)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm pack:\n%s", out)
	tarballs, err := filepath.Glob(filepath.Join(dest, "*.tgz"))
	require.NoError(t, err)
	require.Len(t, tarballs, 1, "npm pack made one tarball:\n%s", out)

	f, err := os.Open(tarballs[0])
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	root := filepath.Join(dest, "unpacked")
	var names []string
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		name, ok := strings.CutPrefix(h.Name, "package/")
		require.True(t, ok, "tarball entry %s outside package/", h.Name)
		require.False(t, strings.Contains(name, ".."), "tarball entry %s", h.Name)
		names = append(names, name)
		path := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
	slices.Sort(names)
	return root, names
}

// checkContents: npm pack ships the built package, its README and the licence,
// nothing else (no sources, tests, examples or tooling).
func checkContents(t *testing.T, root string, names []string) {
	t.Helper()
	var other []string
	for _, n := range names {
		if !strings.HasPrefix(n, "dist/") && n != "package.json" && n != "README.md" && n != "LICENSE" {
			other = append(other, n)
		}
	}
	require.Empty(t, other, "files packed beyond dist/, package.json, README.md and LICENSE")
	for _, want := range []string{"LICENSE", "README.md", "package.json", "dist/index.js", "dist/index.d.ts", "dist/schema.d.ts"} {
		require.Contains(t, names, want)
	}
	licence, err := os.ReadFile("../../LICENSE")
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	require.NoError(t, err)
	require.Equal(t, string(licence), string(got), "the packed LICENSE is the repository's")
}

// browserPage is the test page: it loads the packed package as a browser does (ES
// modules through an import map, no bundler, no Node), drives the real service from
// another origin, verifies a real signed delivery with Web Crypto and writes what it
// saw as JSON into #result (or the error into #error). Every step is the package's
// public API.
const browserPage = `<!doctype html>
<meta charset="utf-8">
<title>@sendonce/client in a browser</title>
<script type="importmap">{"imports": {"@sendonce/client": "/pkg/dist/index.js", "openapi-fetch": "/vendor/openapi-fetch.mjs"}}</script>
<script>
const cfg = %s;
function show(id, text) { const el = document.createElement("pre"); el.id = id; el.textContent = text; document.body.append(el); }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
import("@sendonce/client").then(async ({ Sendonce, SendonceError, SignatureError, verifyWebhook }) => {
  const so = new Sendonce({ url: cfg.url, apiKey: cfg.apiKey });
  const out = {};

  const sub = await so.subscribers.create({ email: "browser@example.com", status: "confirmed" });
  out.created = sub.email;
  await so.subscribers.create({ email: "browser@example.com" }).catch((e) => { out.conflict = [e instanceof SendonceError, e.status, e.type]; });
  await so.subscribers.create({ email: "not an address" }).catch((e) => { out.invalid = [e.status, Object.keys(e.fields)]; });
  out.listed = [];
  for await (const s of so.subscribers.iter({ limit: 1 })) out.listed.push(s.email);
  const msg = await so.messages.send({ to: "browser@example.com", from: "shop@example.com", subject: "Hi", text: "Hi" }, { idempotencyKey: "browser-1" });
  const again = await so.messages.send({ to: "browser@example.com", from: "shop@example.com", subject: "Hi", text: "Hi" }, { idempotencyKey: "browser-1" });
  out.message = [msg.id === again.id, msg.to];

  // The stream, from a known position: read the log to the first suppression's event,
  // follow from there, add a second suppression and receive it.
  await so.api.POST("/v1/suppressions", { params: { header: { "Idempotency-Key": "s1" } }, body: { email: "first@example.com" } });
  let after;
  for (let seen = false; !seen; await sleep(100)) {
    for (;;) {
      const page = await so.events.list({ after, type: ["suppression.created"] });
      if (page.data.length === 0) break;
      after = page.next_cursor;
      seen ||= page.data.some((e) => e.type === "suppression.created" && e.data.email === "first@example.com");
    }
  }
  const stream = so.events.stream({ types: ["suppression.created"], after });
  const next = stream.next();
  await so.api.POST("/v1/suppressions", { params: { header: { "Idempotency-Key": "s2" } }, body: { email: "second@example.com" } });
  const streamed = (await next).value;
  await stream.return(undefined);
  out.streamed = [streamed.type, streamed.type === "suppression.created" && streamed.data.email, typeof streamed.cursor];

  // A real delivery: an endpoint on the page's server, pinged; verified here with Web Crypto.
  const endpoint = await so.api.POST("/v1/event-endpoints", { params: { header: { "Idempotency-Key": "e1" } },
    body: { url: location.origin + "/hook", event_types: ["endpoint.ping"] } });
  if (endpoint.error) throw new SendonceError(endpoint.response.status, endpoint.error);
  await so.api.POST("/v1/event-endpoints/{id}/ping", { params: { path: { id: endpoint.data.id }, header: { "Idempotency-Key": "p1" } } });
  let delivery;
  while (!(delivery = await (await fetch("/captured")).json())) await sleep(100);
  const events = await verifyWebhook(delivery.headers, delivery.body, endpoint.data.secret);
  out.verified = events.map((e) => [e.type, e.type === "endpoint.ping" && e.data.endpoint_id === endpoint.data.id]);
  out.forged = await verifyWebhook(delivery.headers, delivery.body + " ", endpoint.data.secret).then(() => false, (e) => e instanceof SignatureError);
  show("result", JSON.stringify(out));
}).catch((e) => show("error", String(e && e.stack || e)));
</script>
`

// TestBrowserBundle checks what `npm pack` ships, then loads that package in headless Chromium
// from a page on another origin than the service (which allows it through
// SENDONCE_CORS_ORIGINS), and drives a real service through the resources, the event
// stream and webhook verification. A Node-only API in the package (node:crypto,
// Buffer, process) fails it: the import or the call throws in the browser.
func TestBrowserBundle(t *testing.T) {
	root, names := pack(t)
	checkContents(t, root, names)
	bin := need(t, "the package is tested in a real browser", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

	var (
		mu       sync.Mutex
		captured any
	)
	var config []byte
	mux := http.NewServeMux()
	mux.Handle("GET /pkg/", http.StripPrefix("/pkg/", http.FileServer(http.Dir(root))))
	mux.HandleFunc("GET /vendor/openapi-fetch.mjs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		http.ServeFile(w, r, "node_modules/openapi-fetch/dist/index.mjs")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, browserPage, config)
	})
	mux.HandleFunc("POST /hook", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		headers := map[string]string{}
		for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
			headers[h] = r.Header.Get(h)
		}
		mu.Lock()
		if captured == nil {
			captured = map[string]any{"headers": headers, "body": string(body)}
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /captured", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(captured)
	})
	page := httptest.NewServer(mux)
	t.Cleanup(page.Close)

	// The service on another origin: 127.0.0.1:PORT ≠ the page's, so every call is cross-origin.
	svc := servicetest.Start(t, "SENDONCE_CORS_ORIGINS="+page.URL)
	config, err := json.Marshal(map[string]string{"url": svc.URL, "apiKey": svc.APIKey})
	require.NoError(t, err)
	require.NotEqual(t, svc.URL, page.URL)

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
	// The first action starts the browser and must not carry a timeout (it would stop
	// the browser); the wait after it is bounded against a hung page, which is not a
	// performance assertion.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(page.URL+"/")))
	step, cancelStep := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelStep()
	require.NoError(t, chromedp.Do(step, chromedp.WaitReady(chromedp.CSS("#result, #error"))))
	which, err := chromedp.Run(step, chromedp.Evaluate[string](`document.querySelector("#result, #error").id`))
	require.NoError(t, err)
	text, err := chromedp.Run(step, chromedp.Text(chromedp.CSS("#result, #error")))
	require.NoError(t, err)
	require.Equal(t, "result", which, "the page failed:\n%s", text)

	var got struct {
		Created  string
		Conflict []any
		Invalid  []any
		Listed   []string
		Message  []any
		Streamed []any
		Verified [][]any
		Forged   bool
	}
	require.NoError(t, json.Unmarshal([]byte(text), &got), text)
	require.Equal(t, "browser@example.com", got.Created)
	require.Equal(t, []any{true, 409.0, "https://sendonce.dev/problems/conflict"}, got.Conflict)
	require.Equal(t, []any{422.0, []any{"/email"}}, got.Invalid)
	require.Equal(t, []string{"browser@example.com"}, got.Listed)
	require.Equal(t, []any{true, "browser@example.com"}, got.Message, "the same key answers the same message")
	require.Equal(t, []any{"suppression.created", "second@example.com", "string"}, got.Streamed)
	require.Equal(t, [][]any{{"endpoint.ping", true}}, got.Verified)
	require.True(t, got.Forged, "a changed body is refused with SignatureError")
}
