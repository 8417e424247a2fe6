package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// TestCLIABTest: `campaigns ab set` makes a draft an A/B test from --variant
// flags (a comma inside a subject kept, an HTML body read from a file) or a JSON
// file; bad fields are usage errors, bad tests the API's 422 naming the field;
// the campaign sends its test group, `ab winner` chooses once (a second choice
// is refused), the rest gets the winner, and `ab show` prints the variants, the
// winner and the report per variant with its hint. `ab clear` works on a draft
// only.
func TestCLIABTest(t *testing.T) {
	t.Parallel()
	run, sdk, _ := setup(t)
	ok := func(args ...string) string {
		t.Helper()
		r := run(args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		return r.stdout
	}
	ok("subscribers", "import", writeCSV(t, 40, ""))
	camp := createCampaign(t, sdk, "ab")
	id := itoa(camp)
	html := filepath.Join(t.TempDir(), "c.html")
	require.NoError(t, os.WriteFile(html, []byte("<p>Variant C for {{.Name}}</p>"), 0o600))

	r := run("campaigns", "ab", "set", id, "--mode", "split", "--variant", "colour=red", "--variant", "subject=x")
	require.Equal(t, ExitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, `"colour" is not one of subject, from_name`)
	r = run("campaigns", "ab", "set", id, "--mode", "split", "--variant", "subject=Only one")
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "/variants")
	r = run("campaigns", "ab", "set", id, "--mode", "test", "--test-percent", "80", "--metric", "manual",
		"--variant", "subject=A", "--variant", "subject=B")
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "/test_percent")
	require.Equal(t, ExitUsage, run("campaigns", "ab", "set", id, "--variant", "subject=A").code, "--mode is needed")
	r = run("campaigns", "ab", "show", id)
	require.Equal(t, ExitNotFound, r.code, "nothing was stored: %s", r.stdout)

	var test client.ABTest
	require.NoError(t, json.Unmarshal([]byte(ok("campaigns", "ab", "set", id, "--mode", "test", "--test-percent", "50",
		"--metric", "manual", "--wait", "1h", "--variant", "subject=Hello, {{.Name}},from_name=Ann at Example",
		"--variant", "subject=Second", "--variant", "html_file="+html, "--json")), &test))
	require.Len(t, test.Variants, 3)
	require.Equal(t, "Hello, {{.Name}}", *test.Variants[0].Subject)
	require.Equal(t, "Ann at Example", *test.Variants[0].FromName)
	require.Equal(t, "<p>Variant C for {{.Name}}</p>", *test.Variants[2].HtmlTemplate)
	require.Nil(t, test.Variants[2].Subject, "the campaign's own")
	out := ok("campaigns", "ab", "show", id)
	require.Contains(t, out, "mode: test: 50 % first, winner chosen by hand")
	require.Contains(t, out, "winner: -")
	require.Regexp(t, `C +\(the campaign's\) +\(the campaign's\) +own HTML`, out)

	ok("campaigns", "approve", id)
	// The test group goes out; the rest waits for the winner.
	require.Eventually(t, func() bool {
		r := run("campaigns", "ab", "show", id, "--json")
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &test) != nil || test.Report == nil {
			return false
		}
		var recipients, sent int64
		for _, v := range *test.Report {
			recipients += v.Recipients
			sent += v.Sent
		}
		return recipients > 0 && sent == recipients
	}, 60*time.Second, 200*time.Millisecond)
	var group int64
	for _, v := range *test.Report {
		group += v.Recipients
	}
	require.Less(t, group, int64(40), "the rest has no variant yet")
	require.Equal(t, ExitRefused, run("campaigns", "ab", "set", id, "--mode", "split", "--variant", "subject=A",
		"--variant", "subject=B").code, "variants change only in a draft")

	require.Contains(t, ok("campaigns", "ab", "winner", id, "b"), "variant B wins")
	r = run("campaigns", "ab", "winner", id, "A")
	require.Equal(t, ExitRefused, r.code, "chosen once: %s", r.stdout)
	require.Eventually(t, func() bool {
		c, err := sdk.GetCampaignWithResponse(context.Background(), camp)
		return err == nil && c.JSON200 != nil && c.JSON200.Status == client.CampaignStatusSent
	}, 60*time.Second, 200*time.Millisecond)
	out = ok("campaigns", "ab", "show", id)
	require.Contains(t, out, "winner: B (manual, ")
	require.Regexp(t, `B +\d+ +\d+ +0 +0\.00% +0 +0\.00% +1\.000 +may be noise`, out)
	require.Regexp(t, `A +\d+ +\d+ +0 +0\.00% +0 +0\.00% +1\.000 +leader`, out, "a tie goes to the earlier variant")
	require.NoError(t, json.Unmarshal([]byte(ok("campaigns", "ab", "show", id, "--json")), &test))
	var total int64
	for _, v := range *test.Report {
		total += v.Sent
	}
	require.Equal(t, int64(40), total, "every recipient once, in one variant")
	require.Equal(t, ExitRefused, run("campaigns", "ab", "clear", id).code)

	// A split from a JSON file, flags changing it; cleared again on a draft.
	other := itoa(createCampaign(t, sdk, "split"))
	file := filepath.Join(t.TempDir(), "test.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"mode":"test","test_percent":10,"metric":"clicks","wait_seconds":3600,
		"variants":[{"subject":"One"},{"subject":"Two"}]}`), 0o600))
	require.NoError(t, json.Unmarshal([]byte(ok("campaigns", "ab", "set", other, "--file", file, "--wait", "2h",
		"--json")), &test))
	require.Equal(t, 7200, *test.WaitSeconds)
	require.Equal(t, "Two", *test.Variants[1].Subject)
	require.Contains(t, ok("campaigns", "ab", "show", other), "mode: test: 10 % first, winner by clicks after 2h0m0s")
	require.Contains(t, ok("campaigns", "ab", "clear", other), "no A/B test")
	require.Equal(t, ExitNotFound, run("campaigns", "ab", "show", other).code)
	require.Equal(t, ExitNotFound, run("campaigns", "ab", "show", "999999").code)
}

// A --variant value splits only at commas that a field name and = follow.
func TestSplitVariant(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"subject=Hi":                       {"subject=Hi"},
		"subject=Hi, you,from_name=Ann":    {"subject=Hi, you", "from_name=Ann"},
		"subject=a,b=c,template=3":         {"subject=a,b=c", "template=3"},
		"html_file=a.html,text_file=a.txt": {"html_file=a.html", "text_file=a.txt"},
		"from_name=Ann, subject=x":         {"from_name=Ann, subject=x"},
		"subject=,from_name=":              {"subject=", "from_name="},
	} {
		require.Equal(t, want, splitVariant(in), in)
	}
	_, err := parseVariant("template=x")
	require.ErrorContains(t, err, "not a template id")
	v, err := parseVariant("template=4,subject=S")
	require.NoError(t, err)
	require.Equal(t, int64(4), *v.TemplateId)
	require.Equal(t, "S", *v.Subject)

	require.Equal(t, "leader", significance(client.ABVariantReport{Leader: true, PValue: 1}))
	require.Equal(t, "behind the leader (p < 0.05)", significance(client.ABVariantReport{PValue: 0.01}))
	require.Equal(t, "may be noise", significance(client.ABVariantReport{PValue: 0.2}))
	require.True(t, strings.HasPrefix(rate(0.125), "12.50"))
}

// A window prints as --window takes it, runs of days as ranges, and reads back
// to the same days.
func TestWindowText(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"mon-fri 09:00-17:00 Europe/Berlin", "sat,sun 22:00-06:00", "mon,wed-fri 08:00-20:00 UTC", "sun 10:00-11:00"} {
		w, err := parseWindow(in)
		require.NoError(t, err)
		require.Equal(t, in, windowText(w))
	}
	w, err := parseWindow("fri-mon 09:00-10:00")
	require.NoError(t, err)
	require.Equal(t, "mon,fri-sun 09:00-10:00", windowText(w))
}
