package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
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

	seg := ok("segments", "create", "--name", "pro", "--match", `$.plan == "pro"`, "-q")
	var s client.Segment
	require.NoError(t, json.Unmarshal([]byte(ok("segments", "edit", seg, "--name", "pro users", "--json")), &s))
	require.Equal(t, "pro users", s.Name)
	require.Contains(t, s.Match, `plan`, "the condition is kept")
	require.Contains(t, s.Match, `"pro"`, "the condition is kept")

	require.Equal(t, ExitUsage, run("campaigns", "create", "--name", "x").code, "--from is required")
	require.Equal(t, ExitUsage, run("templates", "create", "--name", "x", "--subject", "y", "--html-file", filepath.Join(dir, "none")).code)
	r = run("segments", "create", "--name", "broken", "--match", "$.plan ==")
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "match")
	require.Equal(t, ExitNotFound, run("lists", "edit", "999999", "--name", "x").code)
}
