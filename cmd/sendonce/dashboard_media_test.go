package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestDashboardMedia: the media page starts empty; an image chosen in the file
// field is uploaded, shown as a loaded thumbnail with its size, its address copied;
// an SVG is refused with the API's words and nothing is added; Delete (after the
// confirmation) removes an image; a read-only session sees the images and
// may copy their addresses, but is offered no upload and no delete. axe-clean.
func TestDashboardMedia(t *testing.T) {
	b, base, key, _ := signedIn(t, "media")

	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 640, 160))
	for x := range 640 {
		img.Set(x, x%160, color.RGBA{20, 90, 200, 255})
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	banner := filepath.Join(dir, "banner.png")
	require.NoError(t, os.WriteFile(banner, buf.Bytes(), 0o600))
	svg := filepath.Join(dir, "evil.svg")
	require.NoError(t, os.WriteFile(svg, []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), 0o600))

	b.eval(`window.confirm = () => true; window.__copied = ''; navigator.clipboard.writeText = (s) => { window.__copied = s; return Promise.resolve(); }; true`)

	b.open("#/media", "Media")
	b.wait(`__t.text().includes('No images yet.')`)
	b.audit("media-empty")

	require.NoError(t, chromedp.Do(b.ctx, chromedp.SetUploadFiles(chromedp.CSS(`input[type=file]`), []string{banner})))
	b.eval(`__t.click('Upload')`)
	b.wait(`[...document.querySelectorAll('.media-grid img')].some((i) => i.alt === 'banner.png' && i.complete && i.naturalWidth === 320)`)
	require.Contains(t, b.str(`document.querySelector('.media-grid').innerText`), "640×160")
	b.audit("media")
	b.eval(`__t.click('Copy address')`)
	b.wait(`window.__copied !== ''`)
	list := apiCall(t, base, key, http.MethodGet, "/v1/media", nil)["data"].([]any)
	require.Len(t, list, 1)
	require.Equal(t, list[0].(map[string]any)["url"], b.str(`window.__copied`))

	require.NoError(t, chromedp.Do(b.ctx, chromedp.SetUploadFiles(chromedp.CSS(`input[type=file]`), []string{svg})))
	b.eval(`__t.click('Upload')`)
	b.wait(`!!document.querySelector('.error') && document.querySelector('.error').innerText.includes('markup')`)
	require.Len(t, apiCall(t, base, key, http.MethodGet, "/v1/media", nil)["data"].([]any), 1, "the SVG was not stored")
	b.audit("media-refused")

	// A second image, deleted after the confirmation: the first stays.
	small := filepath.Join(dir, "small.png")
	buf.Reset()
	require.NoError(t, png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 12, 12))))
	require.NoError(t, os.WriteFile(small, buf.Bytes(), 0o600))
	require.NoError(t, chromedp.Do(b.ctx, chromedp.SetUploadFiles(chromedp.CSS(`input[type=file]`), []string{small})))
	b.eval(`__t.click('Upload')`)
	b.wait(`document.querySelectorAll('.media-grid img').length === 2`)
	b.eval(`document.querySelector('[aria-label="Delete small.png"]').click(); true`)
	b.wait(`document.querySelectorAll('.media-grid img').length === 1 && !__t.text().includes('small.png')`)
	require.Len(t, apiCall(t, base, key, http.MethodGet, "/v1/media", nil)["data"].([]any), 1)

	// A read-only session: the images, copying, no upload, no delete.
	ro := apiCall(t, base, key, http.MethodPost, "/v1/api-keys", map[string]any{"name": "viewer", "role": "read_only"})
	b.eval(`__t.click('Sign out')`)
	b.wait(`!!document.querySelector('main.signin')`)
	b.eval(`__t.click('Sign in with an API key')`)
	b.eval(fmt.Sprintf(`__t.fill('API key', %q)`, ro["token"]))
	b.eval(`__t.click('Sign in')`)
	b.wait(`!!document.querySelector('nav')`)
	b.eval(pageHelpers)
	b.open("#/media", "Media")
	b.wait(`document.querySelectorAll('.media-grid img').length === 1`)
	offered := b.str(`JSON.stringify([...document.querySelectorAll('main button, main form input')]
		.filter((el) => el.offsetParent !== null && !el.disabled && !el.closest('[data-reads], .pager'))
		.map((el) => el.textContent.trim() || el.id))`)
	require.Equal(t, "[]", offered, "write controls offered to a read-only session")
	b.audit("media-read-only")
	b.eval(`__t.click('Sign out')`)
	b.wait(`!!document.querySelector('main.signin')`)

}
