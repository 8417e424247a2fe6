package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// TestCLILayoutBrand: layouts create and edit take the header and footer from
// files and the brand colours from flags; an edit changes only the colours
// given (an empty one takes it away); a bad colour is refused naming it.
func TestCLILayoutBrand(t *testing.T) {
	t.Parallel()
	run, _, _ := setup(t)
	ok := func(args ...string) string {
		t.Helper()
		r := run(args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		return strings.TrimSpace(r.stdout)
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	frame := write("frame.html", `<div style="color:{{brand.text}}">{{content}}</div>`)
	header := write("header.html", `<h1 style="color:{{brand.primary}}">ACME</h1>`)
	footer := write("footer.html", `<p>ACME Ltd</p>`)

	var l client.Layout
	require.NoError(t, json.Unmarshal([]byte(ok("layouts", "create", "--name", "brand", "--html-file", frame,
		"--header-file", header, "--footer-file", footer, "--brand-primary", "#0B6E4F", "--brand-text", "#1f2933", "--json")), &l))
	require.Equal(t, `<h1 style="color:{{brand.primary}}">ACME</h1>`, l.Header)
	require.Equal(t, `<p>ACME Ltd</p>`, l.Footer)
	require.Equal(t, "#0b6e4f", *l.Brand.Primary)
	require.Equal(t, "#1f2933", *l.Brand.Text)
	require.Nil(t, l.Brand.Link)
	id := ok("layouts", "create", "--name", "other", "--html-file", frame, "-q")

	var e client.Layout
	require.NoError(t, json.Unmarshal([]byte(ok("layouts", "edit", id, "--brand-link", "#c2410c", "--json")), &e))
	require.Equal(t, "#c2410c", *e.Brand.Link)
	require.NoError(t, json.Unmarshal([]byte(ok("layouts", "edit", id, "--brand-primary", "#111111", "--json")), &e))
	require.Equal(t, "#c2410c", *e.Brand.Link, "a colour not given is kept")
	var cleared client.Layout
	require.NoError(t, json.Unmarshal([]byte(ok("layouts", "edit", id, "--brand-link", "", "--json")), &cleared))
	require.Nil(t, cleared.Brand.Link)
	require.Equal(t, "#111111", *cleared.Brand.Primary)

	// A message from a block design framed in the layout takes its colours.
	blocks := write("design.json", `{"rows":[{"columns":[{"blocks":[{"type":"button","text":"Track","url":"https://shop.example/t"}]}]}]}`)
	var m client.Message
	require.NoError(t, json.Unmarshal([]byte(ok("messages", "send", "--to", "ada@example.com", "--from", "shop@example.com", "--subject", "Order",
		"--blocks", blocks, "--layout", strconv.FormatInt(l.Id, 10), "--idempotency-key", "blk-1", "--json")), &m))
	require.Equal(t, "Order", m.Subject)
	require.Equal(t, ExitUsage, run("messages", "send", "--to", "ada@example.com", "--from", "shop@example.com", "--subject", "Order",
		"--blocks", blocks, "--markdown", frame, "--idempotency-key", "both").code)

	r := run("layouts", "edit", id, "--brand-background", "blue")
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "brand background must be a colour")
}
