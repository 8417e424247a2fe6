package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// A person's activity (paged), data export and erasure; a campaign's retry of its
// failed sends and its copy; a template's copy: through the binary, with the
// documented exit codes.
func TestCLIReportsAndDataRights(t *testing.T) {
	t.Parallel()
	run, sdk, svc := setup(t)
	ctx := context.Background()
	withStdin := func(stdin string, args ...string) cliRun {
		return sendonce(t, []string{"SENDONCE_URL=" + svc.URL, "SENDONCE_API_KEY=" + svc.APIKey}, stdin, args...)
	}

	r := run("subscribers", "import", writeCSV(t, 3, ""))
	require.Equal(t, 0, r.code, r.stderr)
	camp := createCampaign(t, sdk, "rights")
	r = run("campaigns", "approve", itoa(camp), "--watch")
	require.Equal(t, 0, r.code, r.stderr)
	second := createCampaign(t, sdk, "rights again")
	r = run("campaigns", "approve", itoa(second), "--watch")
	require.Equal(t, 0, r.code, r.stderr)
	id, err := subscriberRef(ctx, sdk, "Reader001@example.com")
	require.NoError(t, err)

	// Activity: the campaigns' sends, by address or by id; a page of one names the next cursor.
	r = run("subscribers", "activity", "reader001@example.com", "--json", "--all")
	require.Equal(t, 0, r.code, r.stderr)
	var items []client.ActivityItem
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &items))
	var sent []float64
	for _, it := range items {
		if it.Kind == "send" {
			sent = append(sent, it.Data["campaign_id"].(float64))
		}
	}
	require.Equal(t, []float64{float64(second), float64(camp)}, sent, "newest first: %s", r.stdout)
	r = run("subscribers", "activity", itoa(id), "--limit", "1")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "KIND")
	_, cursor, ok := strings.Cut(strings.TrimSpace(r.stderr), "more: --cursor ")
	require.True(t, ok, "a first page of one names the next: %q", r.stderr)
	r = run("subscribers", "activity", itoa(id), "--limit", "1", "--cursor", cursor, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var page client.ActivityPage
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
	require.Len(t, page.Data, 1)
	require.Equal(t, items[1].Id, page.Data[0].Id, "the second page is the second item")
	require.Equal(t, ExitNotFound, run("subscribers", "activity", "nobody@example.com").code)
	require.Equal(t, ExitNotFound, run("subscribers", "activity", "999999").code)
	require.Equal(t, ExitUsage, run("subscribers", "activity", "not-an-address").code)
	require.Equal(t, ExitUsage, run("subscribers", "activity", itoa(id), "--limit", "0").code)

	// Download: the API's JSON on standard output.
	r = run("subscribers", "download", "reader001@example.com")
	require.Equal(t, 0, r.code, r.stderr)
	var export client.PersonExport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &export))
	require.Contains(t, r.stdout, "reader001@example.com")
	require.Equal(t, ExitNotFound, run("subscribers", "download", "999999").code)

	// Erase: asks; a wrong answer or none erases nothing (exit 2); the address typed again, or --yes, erases.
	r = withStdin("", "subscribers", "erase", "reader001@example.com")
	require.Equal(t, ExitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "cannot be undone")
	r = withStdin("yes\n", "subscribers", "erase", "reader001@example.com")
	require.Equal(t, ExitUsage, r.code, r.stderr)
	require.Equal(t, 0, run("subscribers", "get", "reader001@example.com").code, "still there")
	r = withStdin("reader001@example.com\n", "subscribers", "erase", "reader001@example.com")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, fmt.Sprintf("erased subscriber %d", id))
	require.Equal(t, ExitNotFound, run("subscribers", "get", "reader001@example.com").code, "erased")
	other, err := subscriberRef(ctx, sdk, "reader002@example.com")
	require.NoError(t, err)
	r = run("subscribers", "erase", itoa(other), "--yes", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var erasure client.Erasure
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &erasure))
	require.Equal(t, other, *erasure.SubscriberId)
	require.Equal(t, ExitNotFound, run("subscribers", "erase", "999999", "--yes").code)

	// Retry failed: a campaign without failed sends is refused (exit 4); an unknown one 3; not an id 2.
	r = run("campaigns", "retry-failed", itoa(camp))
	require.Equal(t, ExitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "no failed recipients")
	require.Equal(t, ExitNotFound, run("campaigns", "retry-failed", "999999").code)
	require.Equal(t, ExitUsage, run("campaigns", "retry-failed", "x").code)

	// Duplicate a campaign: a new draft with its content; then a template.
	r = run("campaigns", "duplicate", itoa(camp), "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var dup client.Campaign
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &dup))
	require.NotEqual(t, camp, dup.Id)
	require.Equal(t, client.CampaignStatusDraft, dup.Status)
	require.Equal(t, "Hello {{.Name}}", dup.Subject)
	r = run("campaigns", "duplicate", itoa(camp))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, fmt.Sprintf("duplicated campaign %d as ", camp))
	require.Equal(t, ExitNotFound, run("campaigns", "duplicate", "999999").code)

	tpl, err := sdk.CreateTemplateWithResponse(ctx, nil, client.TemplateCreate{Name: "receipt", Subject: "Your receipt",
		Html: client.Ptr("<p>Thanks</p>")})
	require.NoError(t, client.Check(tpl, err))
	r = run("templates", "duplicate", itoa(tpl.JSON201.Id), "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var tdup client.Template
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &tdup))
	require.NotEqual(t, tpl.JSON201.Id, tdup.Id)
	require.Equal(t, "Your receipt", tdup.Subject)
	require.Equal(t, ExitNotFound, run("templates", "duplicate", "999999").code)
}
