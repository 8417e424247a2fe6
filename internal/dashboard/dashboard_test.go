package dashboard

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVendoredChecksums holds the vendored library to the file npm published
// (VENDOR.md says where it comes from): an edit or an accidental upgrade fails.
func TestVendoredChecksums(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"static/preact-htm.js": "72284e8e9079c87817145df1110f74e8a2aa040b2fc384922e18dfcb46fc1fd7",
		"static/uplot.js":      "5dd9b3281aa64b461b42d9945f6adb2649d346502b12281a9ae0d46599a80eba",
		"static/uplot.css":     "df630c6a8d6f8eeaff264b50f73ce5b114f646ffd9a0bb74f049b0a00135fa04",
		"static/uplot.d.ts":    "af44374f6e808be4f7f3fa5888b9c7574dca9f8a15a66d54b6763535802c8080",
	} {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		sum := sha256.Sum256(b)
		require.Equal(t, want, hex.EncodeToString(sum[:]), name)
	}
	for _, lic := range []string{"static/LICENSE-htm", "static/LICENSE-preact", "static/LICENSE-uplot"} {
		_, err := os.Stat(lic)
		require.NoError(t, err, "the vendored library's license stays next to it")
	}
}

// TestModulesResolve: every relative import of the dashboard's modules names an
// embedded asset (all of them live in one folder, under one versioned URL), and no
// module reaches for a CDN.
func TestModulesResolve(t *testing.T) {
	t.Parallel()
	d := New()
	imports := regexp.MustCompile(`from '([^']+)'`)
	for name, b := range d.assets {
		if !strings.HasSuffix(name, ".js") || name == "preact-htm.js" || name == "uplot.js" { // vendored
			continue
		}
		for _, m := range imports.FindAllStringSubmatch(string(b), -1) {
			require.True(t, strings.HasPrefix(m[1], "./"), "%s imports %s", name, m[1])
			_, ok := d.assets[strings.TrimPrefix(m[1], "./")]
			require.True(t, ok, "%s imports %s, which is not embedded", name, m[1])
		}
		require.NotContains(t, string(b), "https://", "%s loads nothing from elsewhere", name)
	}
}

// TestPageNamesVersionedAssets: the page points at this build's assets, and a
// message page opens its links outside the sandboxed frame.
func TestPageNamesVersionedAssets(t *testing.T) {
	t.Parallel()
	d := New()
	rec := httptest.NewRecorder()
	d.Page(rec, httptest.NewRequest("GET", "/app", nil))
	require.Contains(t, rec.Body.String(), `src="/app/assets/`+d.Version()+`/app.js"`)
	require.Contains(t, rec.Body.String(), `href="/app/assets/`+d.Version()+`/style.css"`)
	require.Equal(t, "DENY", rec.Header().Get("X-Frame-Options"))
	require.True(t, strings.HasPrefix(string(MessagePage("<p>x</p>")), `<!doctype html><base target="_blank">`))
}

// TestDeclarationsNotServed: the type declarations kept beside the modules for tsc
// (make ts) are not assets.
func TestDeclarationsNotServed(t *testing.T) {
	t.Parallel()
	_, err := os.Stat("static/preact-htm.d.ts")
	require.NoError(t, err)
	d := New()
	for name := range d.assets {
		require.False(t, strings.HasSuffix(name, ".d.ts"), name)
	}
}
