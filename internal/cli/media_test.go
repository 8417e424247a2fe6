package cli

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// The media library from the command line: an upload prints the image's public
// address (the same file again says it was already there), list shows it,
// a file that is not an image is refused (exit 4, nothing stored), an unknown id
// is not found (exit 3) and delete removes it.
func TestCLIMedia(t *testing.T) {
	t.Parallel()
	run, _, _ := setup(t)
	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 30, 10))
	img.Set(3, 3, color.RGBA{200, 10, 10, 255})
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	logo := filepath.Join(dir, "logo.png")
	require.NoError(t, os.WriteFile(logo, b.Bytes(), 0o600))
	svg := filepath.Join(dir, "evil.svg")
	require.NoError(t, os.WriteFile(svg, []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), 0o600))

	r := run("media", "upload", logo, "--json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var m client.Media
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m))
	require.Equal(t, "logo.png", m.Name, "the file's name by default")
	require.Equal(t, [2]int{30, 10}, [2]int{m.Width, m.Height})
	r = run("media", "upload", logo, "--name", "other")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "already in the library")
	require.Contains(t, r.stdout, m.Url)

	r = run("media", "upload", svg)
	require.Equal(t, ExitRefused, r.code, r.stdout)
	require.Contains(t, r.stderr, "markup")
	require.Equal(t, ExitUsage, run("media", "upload", filepath.Join(dir, "missing.png")).code)

	r = run("media", "list")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Equal(t, 2, len(strings.Split(strings.TrimSpace(r.stdout), "\n")), "a header and the one image: %s", r.stdout)
	require.Contains(t, r.stdout, m.Url)

	require.Equal(t, ExitNotFound, run("media", "delete", "999999").code)
	r = run("media", "delete", itoa(m.Id))
	require.Equal(t, ExitOK, r.code, r.stderr)
	r = run("media", "list", "--json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.JSONEq(t, "[]", r.stdout)
}
