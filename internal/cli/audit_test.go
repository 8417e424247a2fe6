package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// sendonce audit lists the audit log through the SDK: the campaign the SDK made
// is there, filtered by target, with the key that made it; a bad time is a usage
// error.
func TestCLIAudit(t *testing.T) {
	t.Parallel()
	run, sdk, _ := setup(t)
	ctx := context.Background()
	resp, err := sdk.CreateCampaignWithResponse(ctx, nil, client.CampaignCreate{Name: "c", FromEmail: "news@example.com",
		Subject: client.Ptr("Hi"), TextTemplate: client.Ptr("Hello")})
	require.NoError(t, client.Check(resp, err))
	id := itoa(resp.JSON201.Id)

	r := run("audit", "--target-type", "campaign", "--target-id", id, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var entries []client.AuditEntry
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &entries))
	require.Len(t, entries, 1)
	require.Equal(t, "campaign.create", entries[0].Action)
	require.Equal(t, id, *entries[0].TargetId)
	require.Equal(t, client.ActorTypeKey, entries[0].Actor.Type)

	r = run("audit", "--action", "campaign.create")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "campaign.create")
	require.Contains(t, r.stdout, "campaign "+id)
	require.Equal(t, ExitUsage, run("audit", "--since", "yesterday").code)
}
