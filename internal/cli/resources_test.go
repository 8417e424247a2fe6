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
	require.NoError(t, json.Unmarshal([]byte(ok("campaigns", "edit", camp, "--window", "fri-mon 22:00-06:00 Europe/Berlin", "--json")), &c))
	require.NotNil(t, c.SendWindow)
	require.Equal(t, []client.SendWindowDays{"fri", "sat", "sun", "mon"}, c.SendWindow.Days, "a range wraps the week")
	require.Equal(t, "22:00", c.SendWindow.Start)
	require.Equal(t, "Europe/Berlin", *c.SendWindow.TimeZone)
	r = run("campaigns", "edit", camp, "--window", "weekdays 9-17")
	require.Equal(t, ExitUsage, r.code, r.stderr)
	r = run("campaigns", "edit", camp, "--window", "mon 09:00-09:00")
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "end must differ from start")

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
	// Block designs: html and text are rendered from the file; a bad one is refused.
	blocks := filepath.Join(dir, "design.json")
	require.NoError(t, os.WriteFile(blocks, []byte(`{"rows":[{"columns":[{"blocks":[{"type":"heading","text":"Hi {{.Name}}"},{"type":"footer"}]}]}]}`), 0o600))
	require.NoError(t, json.Unmarshal([]byte(ok("templates", "create", "--name", "blk", "--subject", "Hi", "--blocks", blocks, "--json")), &tp))
	require.Equal(t, "blocks", string(tp.ContentType))
	require.Contains(t, tp.Html, `<div class="frame"><div style=`, "in the default layout")
	require.NoError(t, json.Unmarshal([]byte(ok("campaigns", "create", "--name", "blk", "--from", "news@example.com", "--list", list,
		"--subject", "March", "--blocks", blocks, "--json")), &c))
	require.Contains(t, c.HtmlTemplate, ">Hi {{.Name}}</h1>")
	require.NoError(t, os.WriteFile(blocks, []byte(`{"rows":[{"columns":[{"blocks":[{"type":"image","src":"https://x.example/a.png"}]}]}]}`), 0o600))
	r = run("templates", "create", "--name", "blk2", "--subject", "Hi", "--blocks", blocks)
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "the image block needs alt")
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

	// Its members: none yet, then the pro subscribers, a page at a time.
	r = run("segments", "members", seg)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "0 members")
	people := filepath.Join(dir, "people.json")
	require.NoError(t, os.WriteFile(people, []byte(`[{"email":"p1@example.com","attributes":{"plan":"pro"}},
		{"email":"f1@example.com","attributes":{"plan":"free"}},{"email":"p2@example.com","attributes":{"plan":"pro"}}]`), 0o600))
	ok("subscribers", "import", people)
	ok("segments", "edit", seg, "--engaged", "none", "-q")
	r = run("segments", "members", seg, "--limit", "1")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "p1@example.com")
	require.NotContains(t, r.stdout, "p2@example.com")
	require.Contains(t, r.stderr, "2 members")
	require.Contains(t, r.stderr, "more: --cursor ")
	var all []client.Subscriber
	require.NoError(t, json.Unmarshal([]byte(ok("segments", "members", seg, "--limit", "1", "--all", "--json")), &all))
	require.Len(t, all, 2)
	require.Equal(t, "p2@example.com", all[1].Email)
	require.Equal(t, ExitNotFound, run("segments", "members", "999999").code)
	require.Equal(t, ExitUsage, run("segments", "members", "x").code)

	require.Equal(t, ExitUsage, run("campaigns", "create", "--name", "x").code, "--from is required")
	require.Equal(t, ExitUsage, run("templates", "create", "--name", "x", "--subject", "y", "--html-file", filepath.Join(dir, "none")).code)
	r = run("segments", "create", "--name", "broken", "--match", "$.plan ==")
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "match")
	require.Equal(t, ExitNotFound, run("lists", "edit", "999999", "--name", "x").code)
}
