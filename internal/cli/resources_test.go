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

// Lists, templates, campaigns and segments made and changed from the command
// line: create answers the id (-q) or the object (--json); edit changes only the
// flags given; missing required flags are usage errors and bad input is refused.
func TestCLICreateAndEdit(t *testing.T) {
	t.Parallel()
	run, _, _ := setup(t)
	ok := func(args ...string) string {
		t.Helper()
		r := run(args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		return strings.TrimSpace(r.stdout)
	}
	dir := t.TempDir()
	html := filepath.Join(dir, "b.html")
	require.NoError(t, os.WriteFile(html, []byte("<p>Hi {{.Name}}</p>"), 0o600))

	list := ok("lists", "create", "--name", "News", "-q")
	_, err := parseID(list)
	require.NoError(t, err, "-q prints the id alone: %q", list)
	var l client.List
	require.NoError(t, json.Unmarshal([]byte(ok("lists", "edit", list, "--description", "monthly", "--json")), &l))
	require.Equal(t, "News", l.Name, "a flag not given is not changed")
	require.Equal(t, "monthly", l.Description)

	tpl := ok("templates", "create", "--name", "hello", "--subject", "Hi", "--html-file", html, "-q")
	var tp client.Template
	require.NoError(t, json.Unmarshal([]byte(ok("templates", "edit", tpl, "--subject", "Hello {{.Name}}", "--json")), &tp))
	require.Equal(t, "<p>Hi {{.Name}}</p>", tp.Html)
	require.Equal(t, "Hello {{.Name}}", tp.Subject)

	camp := ok("campaigns", "create", "--name", "March", "--from", "news@example.com", "--list", list,
		"--subject", "March", "--html-file", html, "-q")
	var c client.Campaign
	require.NoError(t, json.Unmarshal([]byte(ok("campaigns", "edit", camp, "--name", "March news", "--json")), &c))
	require.Equal(t, "March news", c.Name)
	require.Equal(t, "March", c.Subject)
	require.Equal(t, "<p>Hi {{.Name}}</p>", c.HtmlTemplate)
	require.Contains(t, ok("campaigns", "edit", camp, "--subject", "April"), "campaign "+camp+" (March news) updated")
	require.NoError(t, json.Unmarshal([]byte(ok("campaigns", "edit", camp, "--deliver-at-local", "09:30", "--json")), &c))
	require.Equal(t, "09:30", *c.DeliverAtLocal)
	require.NoError(t, json.Unmarshal([]byte(ok("campaigns", "edit", camp, "--name", "April news", "--json")), &c))
	require.Equal(t, "09:30", *c.DeliverAtLocal, "a flag not given is not changed")
	require.NoError(t, json.Unmarshal([]byte(ok("campaigns", "edit", camp, "--deliver-at-local", "", "--json")), &c))
	require.Nil(t, c.DeliverAtLocal, "'' sends at once again")
	r := run("campaigns", "edit", camp, "--deliver-at-local", "9am")
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "deliver_at_local")

	frame := filepath.Join(dir, "frame.html")
	require.NoError(t, os.WriteFile(frame, []byte(`<div class="frame">{{content}}</div>`), 0o600))
	lay := ok("layouts", "create", "--name", "brand", "--html-file", frame, "--default", "-q")
	_, err = parseID(lay)
	require.NoError(t, err, lay)
	require.Equal(t, ExitRefused, run("layouts", "create", "--name", "bad", "--html-file", html).code, "no {{content}}")
	// Markdown bodies: html and text are made from the file.
	md := filepath.Join(dir, "b.md")
	require.NoError(t, os.WriteFile(md, []byte("# Hi {{.Name}}\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"), 0o600))
	mdTpl := ok("templates", "create", "--name", "md", "--subject", "Hi", "--markdown", md, "--json")
	require.NoError(t, json.Unmarshal([]byte(mdTpl), &tp))
	require.Equal(t, "markdown", string(tp.ContentType))
	require.Contains(t, tp.Html, `<div class="frame"><h1>Hi {{.Name}}</h1>`, "in the default layout")
	require.Contains(t, tp.Html, "<table>")
	mdCamp := ok("campaigns", "create", "--name", "md", "--from", "news@example.com", "--list", list,
		"--subject", "March", "--markdown", md, "--json")
	require.NoError(t, json.Unmarshal([]byte(mdCamp), &c))
	require.Contains(t, c.HtmlTemplate, "<h1>Hi {{.Name}}</h1>")
	require.Contains(t, c.TextTemplate, "Hi {{.Name}}\n=")
	// --layout ID names a layout; --layout 0 on edit clears it (the default frames it again).
	own := filepath.Join(dir, "own.html")
	require.NoError(t, os.WriteFile(own, []byte(`<main class="own">{{content}}</main>`), 0o600))
	ownLay := ok("layouts", "create", "--name", "own", "--html-file", own, "-q")
	require.NoError(t, json.Unmarshal([]byte(ok("templates", "edit", strconv.FormatInt(tp.Id, 10), "--layout", ownLay, "--json")), &tp))
	require.Contains(t, tp.Html, `<main class="own">`)
	var cleared client.Template // a fresh value: an absent layout_id leaves a pointer as it was
	require.NoError(t, json.Unmarshal([]byte(ok("templates", "edit", strconv.FormatInt(tp.Id, 10), "--layout", "0", "--json")), &cleared))
	require.Nil(t, cleared.LayoutId)
	require.Contains(t, cleared.Html, `<div class="frame">`, "back in the default layout")
	require.NoError(t, json.Unmarshal([]byte(ok("campaigns", "edit", strconv.FormatInt(c.Id, 10), "--layout", ownLay, "--json")), &c))
	require.Contains(t, c.HtmlTemplate, `<main class="own">`)
	var clearedC client.Campaign
	require.NoError(t, json.Unmarshal([]byte(ok("campaigns", "edit", strconv.FormatInt(c.Id, 10), "--layout", "0", "--json")), &clearedC))
	require.Nil(t, clearedC.LayoutId)
	require.Contains(t, clearedC.HtmlTemplate, `<div class="frame">`)

	seg := ok("segments", "create", "--name", "pro", "--match", `$.plan == "pro"`, "-q")
	var s client.Segment
	require.NoError(t, json.Unmarshal([]byte(ok("segments", "edit", seg, "--name", "pro users", "--json")), &s))
	require.Equal(t, "pro users", s.Name)
	require.Contains(t, s.Match, `plan`, "the condition is kept")
	require.Contains(t, s.Match, `"pro"`, "the condition is kept")
	require.NoError(t, json.Unmarshal([]byte(ok("segments", "edit", seg, "--engaged", "not-opened", "--engaged-campaign", camp, "--json")), &s))
	require.NotNil(t, s.Engagement)
	require.Equal(t, camp, strconv.FormatInt(*s.Engagement.CampaignId, 10))
	require.True(t, *s.Engagement.Negated)
	require.True(t, *s.Engagement.PeopleOnly)
	require.NoError(t, json.Unmarshal([]byte(ok("segments", "edit", seg, "--name", "pro non-openers", "--json")), &s))
	require.NotNil(t, s.Engagement, "an edit keeps the engagement condition")
	require.Equal(t, ExitRefused, run("segments", "edit", seg, "--engaged", "opened", "--engaged-days", "400").code)
	require.Equal(t, ExitUsage, run("segments", "edit", seg, "--engaged", "bounced").code)

	require.Equal(t, ExitUsage, run("campaigns", "create", "--name", "x").code, "--from is required")
	require.Equal(t, ExitUsage, run("templates", "create", "--name", "x", "--subject", "y", "--html-file", filepath.Join(dir, "none")).code)
	r = run("segments", "create", "--name", "broken", "--match", "$.plan ==")
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "match")
	require.Equal(t, ExitNotFound, run("lists", "edit", "999999", "--name", "x").code)
}
