package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
	"github.com/sendonce/sendonce/internal/mcpserver"
	"github.com/sendonce/sendonce/internal/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m, false, nil) }

// connect serves the tools over c to an in-process MCP client of the same SDK,
// through an in-memory transport, and returns the client's session.
func connect(t *testing.T, c *client.Client) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(c, "test").Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callTool calls a tool and decodes its structured answer into out; it fails the
// test on a tool error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res := callRaw(t, cs, name, args)
	require.False(t, res.IsError, "%s: %s", name, text(res))
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, out), "%s", b)
	require.JSONEq(t, string(b), text(res), "the text content is the structured answer, for clients that read only text")
}

func callRaw(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, name)
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// setup starts a real service (`sendonce dev` on a database of this test) and
// returns an SDK client with its full key.
func setup(t *testing.T) (*client.Client, servicetest.Service) {
	t.Helper()
	svc := servicetest.Start(t)
	c, err := client.New(client.Config{URL: svc.URL, APIKey: svc.APIKey})
	require.NoError(t, err)
	return c, svc
}

// Every tool, called by an MCP client against a real service, answers what the
// API holds: the account, lists, templates, segments, subscribers (listed,
// searched, got by id and by address), campaigns (listed, got, with stats and
// report once sent), and a draft that is a draft.
func TestToolsAgainstAService(t *testing.T) {
	t.Parallel()
	sdk, _ := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	list, err := sdk.CreateListWithResponse(ctx, nil, client.ListCreate{Name: "Readers", Description: client.Ptr("monthly news")})
	require.NoError(t, client.Check(list, err))
	var subIDs []int64
	for _, email := range []string{"ada@example.org", "ada.b@example.org", "grace@example.org"} {
		s, err := sdk.Subscribers.Create(ctx, &client.SubscriberCreate{Email: email, Name: client.Ptr("Reader"),
			Status:     client.Ptr(client.SubscriberCreateStatusConfirmed),
			Attributes: &client.Attributes{"plan": "pro"}})
		require.NoError(t, err)
		subIDs = append(subIDs, s.Id)
	}
	members, err := sdk.AddListMembersWithResponse(ctx, list.JSON201.Id, nil, client.MemberIDs{SubscriberIds: subIDs})
	require.NoError(t, client.Check(members, err))
	tpl, err := sdk.CreateTemplateWithResponse(ctx, nil, client.TemplateCreate{Name: "Welcome", Subject: "Hi {{.Name}}",
		Text: client.Ptr("Welcome")})
	require.NoError(t, client.Check(tpl, err))
	seg, err := sdk.CreateSegmentWithResponse(ctx, nil, client.SegmentInput{Name: "pro", Match: client.Ptr(`$.plan == "pro"`)})
	require.NoError(t, client.Check(seg, err))
	sent, err := sdk.Campaigns.Create(ctx, &client.CampaignCreate{Name: "March news", FromEmail: "news@example.org",
		Subject: client.Ptr("March"), TextTemplate: client.Ptr("Hi {{.Name}}"), ListIds: &[]int64{list.JSON201.Id}})
	require.NoError(t, err)
	_, err = sdk.Campaigns.Approve(ctx, sent.Id, nil)
	require.NoError(t, err)

	cs := connect(t, sdk)

	var acc struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	callTool(t, cs, "get_account", nil, &acc)
	require.NotZero(t, acc.ID)
	require.NotEmpty(t, acc.Name)

	var lists struct {
		Lists []struct {
			ID          int64  `json:"id"`
			Name        string `json:"name"`
			MemberCount int64  `json:"member_count"`
		} `json:"lists"`
	}
	callTool(t, cs, "list_lists", nil, &lists)
	i := slices.IndexFunc(lists.Lists, func(l struct {
		ID          int64  `json:"id"`
		Name        string `json:"name"`
		MemberCount int64  `json:"member_count"`
	}) bool {
		return l.ID == list.JSON201.Id
	})
	require.GreaterOrEqual(t, i, 0, "the list is listed")
	require.Equal(t, int64(3), lists.Lists[i].MemberCount)

	var tpls struct {
		Templates []struct {
			ID      int64  `json:"id"`
			Subject string `json:"subject"`
		} `json:"templates"`
	}
	callTool(t, cs, "list_templates", nil, &tpls)
	require.Len(t, tpls.Templates, 1)
	require.Equal(t, "Hi {{.Name}}", tpls.Templates[0].Subject)

	var segs struct {
		Segments []struct {
			ID    int64  `json:"id"`
			Match string `json:"match"`
		} `json:"segments"`
	}
	callTool(t, cs, "list_segments", nil, &segs)
	require.Len(t, segs.Segments, 1)
	require.Equal(t, seg.JSON201.Id, segs.Segments[0].ID)
	require.Contains(t, segs.Segments[0].Match, "pro")

	// Subscribers: paged (a cursor that walks on), searched by prefix, got two ways.
	type subPage struct {
		Subscribers []struct {
			ID         int64          `json:"id"`
			Email      string         `json:"email"`
			Attributes map[string]any `json:"attributes"`
		} `json:"subscribers"`
		NextCursor string `json:"next_cursor"`
	}
	var p1, p2 subPage
	callTool(t, cs, "list_subscribers", map[string]any{"list_id": list.JSON201.Id, "limit": 2}, &p1)
	require.Len(t, p1.Subscribers, 2)
	require.NotEmpty(t, p1.NextCursor)
	callTool(t, cs, "list_subscribers", map[string]any{"list_id": list.JSON201.Id, "limit": 2, "cursor": p1.NextCursor}, &p2)
	require.Len(t, p2.Subscribers, 1)
	require.Empty(t, p2.NextCursor)

	var found subPage
	callTool(t, cs, "search_subscribers", map[string]any{"email": "ADA"}, &found)
	require.Len(t, found.Subscribers, 2)

	var one struct {
		ID         int64          `json:"id"`
		Email      string         `json:"email"`
		Attributes map[string]any `json:"attributes"`
	}
	callTool(t, cs, "get_subscriber", map[string]any{"email": "Ada@Example.org"}, &one)
	require.Equal(t, subIDs[0], one.ID, "the exact address, not ada.b@ that shares its prefix")
	require.Equal(t, "pro", one.Attributes["plan"])
	callTool(t, cs, "get_subscriber", map[string]any{"id": subIDs[2]}, &one)
	require.Equal(t, "grace@example.org", one.Email)

	// Campaigns: the draft tool makes a draft, listed and got like the others.
	var draft struct {
		Campaign struct {
			ID      int64   `json:"id"`
			Status  string  `json:"status"`
			ListIDs []int64 `json:"list_ids"`
		} `json:"campaign"`
		Next string `json:"next"`
	}
	callTool(t, cs, "draft_campaign", map[string]any{"name": "April news", "from_email": "news@example.org",
		"subject": "April", "text": "Hi {{.Name}}", "list_ids": []int64{list.JSON201.Id}, "idempotency_key": "april-draft"}, &draft)
	require.Equal(t, "draft", draft.Campaign.Status)
	require.Equal(t, []int64{list.JSON201.Id}, draft.Campaign.ListIDs)
	require.Contains(t, draft.Next, "approve")
	again := draft.Campaign.ID
	callTool(t, cs, "draft_campaign", map[string]any{"name": "April news", "from_email": "news@example.org",
		"subject": "April", "text": "Hi {{.Name}}", "list_ids": []int64{list.JSON201.Id}, "idempotency_key": "april-draft"}, &draft)
	require.Equal(t, again, draft.Campaign.ID, "the same idempotency key is the same draft")
	got, err := sdk.Campaigns.Get(ctx, draft.Campaign.ID)
	require.NoError(t, err)
	require.Equal(t, client.CampaignStatusDraft, got.Status, "the API holds a draft")

	var camps struct {
		Campaigns []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"campaigns"`
	}
	callTool(t, cs, "list_campaigns", map[string]any{"status": "draft"}, &camps)
	require.Len(t, camps.Campaigns, 1)
	require.Equal(t, draft.Campaign.ID, camps.Campaigns[0].ID)
	callTool(t, cs, "list_campaigns", map[string]any{"order": "newest"}, &camps)
	require.Len(t, camps.Campaigns, 2)
	require.Equal(t, draft.Campaign.ID, camps.Campaigns[0].ID, "newest first")

	var full struct {
		ID           int64  `json:"id"`
		Name         string `json:"name"`
		TextTemplate string `json:"text_template"`
	}
	callTool(t, cs, "get_campaign", map[string]any{"id": sent.Id}, &full)
	require.Equal(t, "March news", full.Name)
	require.Equal(t, "Hi {{.Name}}", full.TextTemplate)

	// Stats and report of the approved campaign once the service has sent it.
	var stats struct {
		Stats struct {
			Status string `json:"status"`
			Counts struct {
				Sent int64 `json:"sent"`
			} `json:"counts"`
		} `json:"stats"`
		Report struct {
			Audience int64 `json:"audience"`
			Sent     int64 `json:"sent"`
		} `json:"report"`
	}
	for stats.Stats.Status != "sent" {
		require.NoError(t, ctx.Err(), "the campaign was not sent in time")
		callTool(t, cs, "get_campaign_stats", map[string]any{"id": sent.Id}, &stats)
	}
	require.Equal(t, int64(3), stats.Stats.Counts.Sent)
	require.Equal(t, int64(3), stats.Report.Audience)
	require.Equal(t, int64(3), stats.Report.Sent)
}

// Mistakes are tool errors that say what is wrong, not protocol failures: a
// campaign the account does not have (the API's 404), a bound exceeded, an
// argument of the wrong type, a missing required one.
func TestToolErrorsSayWhy(t *testing.T) {
	t.Parallel()
	sdk, _ := setup(t)
	cs := connect(t, sdk)

	res := callRaw(t, cs, "get_campaign", map[string]any{"id": 1 << 40})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "404")
	require.Contains(t, text(res), "[not_found]")

	res = callRaw(t, cs, "list_subscribers", map[string]any{"limit": 500})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "limit must be 1 to 100")

	res = callRaw(t, cs, "get_campaign", map[string]any{"id": "seven"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "id")

	res = callRaw(t, cs, "draft_campaign", map[string]any{"name": "no sender"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "from_email")

	res = callRaw(t, cs, "draft_campaign", map[string]any{"name": "bad", "from_email": "not an address"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "422")
	require.Contains(t, text(res), "/from_email")
}

// A read-only key reads through the tools, and its draft is refused by the API
// (403): the tool answers an error naming the refusal, and nothing is created.
func TestReadOnlyKeyCannotDraft(t *testing.T) {
	t.Parallel()
	sdk, svc := setup(t)
	ctx := context.Background()
	// The generated client without client.New's transport: that one gives every
	// POST an Idempotency-Key, which this route refuses (its answer holds a token).
	gen, err := client.NewClientWithResponses(svc.URL, client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+svc.APIKey)
		return nil
	}))
	require.NoError(t, err)
	key, err := gen.CreateAPIKeyWithResponse(ctx, client.APIKeyCreate{Name: "assistant", Role: client.Ptr(client.APIKeyRoleReadOnly)})
	require.NoError(t, client.Check(key, err))
	ro, err := client.New(client.Config{URL: svc.URL, APIKey: key.JSON201.Token})
	require.NoError(t, err)
	cs := connect(t, ro)

	var camps struct {
		Campaigns []struct{} `json:"campaigns"`
	}
	callTool(t, cs, "list_campaigns", nil, &camps)
	require.Empty(t, camps.Campaigns)

	res := callRaw(t, cs, "draft_campaign", map[string]any{"name": "sneaky", "from_email": "news@example.org",
		"subject": "Hi", "text": "Hi"})
	require.True(t, res.IsError, "a read-only key cannot draft")
	require.Contains(t, text(res), "403")
	require.Contains(t, text(res), "campaigns:write", "the permission the key lacks")
	require.Nil(t, res.StructuredContent)

	page, err := sdk.Campaigns.List(ctx, &client.ListCampaignsParams{})
	require.NoError(t, err)
	require.Empty(t, page.Data, "nothing was created")
}

// No tool can approve, schedule, send, pause, resume, cancel, edit or delete:
// the tool list is exactly the reading tools plus draft_campaign, every reading
// tool says it is read-only, and no name carries a verb that acts on mail.
func TestNoToolCanSend(t *testing.T) {
	t.Parallel()
	c, err := client.New(client.Config{URL: "http://127.0.0.1:1", APIKey: "unused"})
	require.NoError(t, err)
	cs := connect(t, c)

	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
		if tool.Name != "draft_campaign" {
			require.NotNil(t, tool.Annotations, tool.Name)
			require.True(t, tool.Annotations.ReadOnlyHint, "%s must be read-only", tool.Name)
		}
		for _, verb := range []string{"approve", "send", "schedule", "pause", "resume", "cancel", "delete", "remove",
			"update", "edit", "retry", "unsubscribe", "suppress", "erase", "import", "test", "enroll", "activate", "rotate", "revoke"} {
			require.NotContains(t, tool.Name, verb, "tool %s", tool.Name)
		}
		require.NotNil(t, tool.InputSchema, "%s has a typed input schema", tool.Name)
		require.NotNil(t, tool.OutputSchema, "%s has a typed output schema", tool.Name)
	}
	slices.Sort(names)
	require.Equal(t, []string{"draft_campaign", "get_account", "get_campaign", "get_campaign_stats", "get_subscriber",
		"list_campaigns", "list_lists", "list_segments", "list_subscribers", "list_templates", "search_subscribers"}, names)
}
