package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce"
	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/account"
)

// auditOf returns the audit entries of the request with id rid.
func (e *env) auditOf(rid string) []api.AuditEntry {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(),
		`SELECT id, actor_type, actor_id, actor_label, action, target_type, target_id, in_change_tx FROM audit_log WHERE request_id = $1 ORDER BY id`, rid)
	require.NoError(e.t, err)
	defer rows.Close()
	var out []api.AuditEntry
	for rows.Next() {
		var a api.AuditEntry
		var typ string
		require.NoError(e.t, rows.Scan(&a.Id, &typ, &a.Actor.Id, &a.Actor.Label, &a.Action, &a.TargetType, &a.TargetId, &a.InChangeTx))
		a.Actor.Type = api.ActorType(typ)
		out = append(out, a)
	}
	require.NoError(e.t, rows.Err())
	return out
}

// TestAuditCampaignLifecycle: every campaign state change the API makes is in the
// audit log exactly once, written in the transaction of the change
// (in_change_tx), with the key that made it, the request id and the campaign; a
// change refused (a 409, four eyes) leaves no entry. With four eyes on, the key
// that created a campaign cannot approve it (403, still a draft), another can, and
// the campaign.approved event names who approved.
func TestAuditCampaignLifecycle(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	acct := decodeAs[api.Account](t, e.do(e.keyA, http.MethodGet, "/v1/account", nil))
	accounts := account.NewService(e.pool)
	_, approverTok, err := accounts.NewKey(ctx, acct.Id, "Grace (approver)", account.KeySpec{Role: access.RoleApprover})
	require.NoError(t, err)
	keys := decodeAs[api.APIKeyPage](t, e.do(e.keyA, http.MethodGet, "/v1/api-keys", nil)).Data
	byName := map[string]int64{}
	for _, k := range keys {
		byName[k.Name] = k.Id
	}

	n := 0
	step := func(token, method, path string, body any, status int, action string) api.Campaign {
		t.Helper()
		n++
		rid := fmt.Sprintf("lifecycle-%d", n)
		res := e.do(token, method, path, body, "X-Request-Id", rid)
		require.Equal(t, status, res.Status, "%s %s: %s", method, path, res.Body)
		entries := e.auditOf(rid)
		if action == "" {
			require.Empty(t, entries, "%s %s was refused: no entry", method, path)
			return api.Campaign{}
		}
		require.Len(t, entries, 1, "%s %s", method, path)
		require.Equal(t, action, entries[0].Action)
		require.True(t, entries[0].InChangeTx, "%s is written in the transaction of the change", action)
		var c api.Campaign
		if res.Status != http.StatusNoContent {
			c = decodeAs[api.Campaign](t, res)
			require.Equal(t, fmt.Sprint(c.Id), *entries[0].TargetId)
		}
		return c
	}
	draft := map[string]any{"name": "c", "from_email": "news@example.com", "subject": "Hi", "text_template": "Hello"}
	c := step(e.keyA, http.MethodPost, "/v1/campaigns", draft, http.StatusCreated, "campaign.create")
	require.Equal(t, api.CampaignCreatedByTypeKey, c.CreatedBy.Type)
	require.Equal(t, byName["default"], c.CreatedBy.Id)
	path := fmt.Sprint("/v1/campaigns/", c.Id)
	later := time.Now().Add(24 * time.Hour)
	step(e.keyA, http.MethodPatch, path, map[string]any{"subject": "Hello"}, http.StatusOK, "campaign.update")
	step(e.keyA, http.MethodPost, path+"/approve", map[string]any{"scheduled_for": later}, http.StatusOK, "campaign.approve")
	step(e.keyA, http.MethodPost, path+"/approve", nil, http.StatusConflict, "")
	step(e.keyA, http.MethodPost, path+"/unapprove", nil, http.StatusOK, "campaign.unapprove")
	step(e.keyA, http.MethodPost, path+"/pause", nil, http.StatusConflict, "")
	step(e.keyA, http.MethodPost, path+"/resume", nil, http.StatusConflict, "")
	step(e.keyA, http.MethodPost, path+"/cancel", nil, http.StatusOK, "campaign.cancel")
	step(e.keyA, http.MethodDelete, path, nil, http.StatusConflict, "")
	d := step(e.keyA, http.MethodPost, "/v1/campaigns", draft, http.StatusCreated, "campaign.create")
	step(e.keyA, http.MethodDelete, fmt.Sprint("/v1/campaigns/", d.Id), nil, http.StatusNoContent, "campaign.delete")

	// Four eyes.
	res := e.do(e.keyA, http.MethodPatch, "/v1/account", map[string]any{"four_eyes": true})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.True(t, decodeAs[api.Account](t, res).FourEyes)
	c = step(e.keyA, http.MethodPost, "/v1/campaigns", draft, http.StatusCreated, "campaign.create")
	path = fmt.Sprint("/v1/campaigns/", c.Id)
	n++
	res = e.do(e.keyA, http.MethodPost, path+"/approve", map[string]any{"scheduled_for": later}, "X-Request-Id", fmt.Sprintf("lifecycle-%d", n))
	require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
	require.Contains(t, string(res.Body), "four_eyes")
	require.Empty(t, e.auditOf(fmt.Sprintf("lifecycle-%d", n)), "a refused approval leaves no entry")
	require.Equal(t, api.CampaignStatusDraft, decodeAs[api.Campaign](t, e.do(e.keyA, http.MethodGet, path, nil)).Status, "and no approval")
	approved := step(approverTok, http.MethodPost, path+"/approve", map[string]any{"scheduled_for": later}, http.StatusOK, "campaign.approve")
	require.Equal(t, api.CampaignStatusApproved, approved.Status)

	// The log, through the API: newest first, filtered by target and actor.
	page := decodeAs[api.AuditEntryPage](t, e.do(e.keyA, http.MethodGet, "/v1/audit-log?target_type=campaign&target_id="+fmt.Sprint(c.Id), nil))
	require.Len(t, page.Data, 2)
	require.Equal(t, "campaign.approve", page.Data[0].Action)
	require.Equal(t, "Grace (approver)", page.Data[0].Actor.Label)
	require.Equal(t, api.ActorTypeKey, page.Data[0].Actor.Type)
	require.Equal(t, "campaign.create", page.Data[1].Action)
	require.Equal(t, "default", page.Data[1].Actor.Label)
	page = decodeAs[api.AuditEntryPage](t, e.do(e.keyA, http.MethodGet, "/v1/audit-log?action=campaign.approve&limit=1", nil))
	require.Len(t, page.Data, 1)
	require.NotNil(t, page.NextCursor)
	page = decodeAs[api.AuditEntryPage](t, e.do(e.keyA, http.MethodGet, "/v1/audit-log?action=campaign.approve&limit=1&cursor="+url.QueryEscape(*page.NextCursor), nil))
	require.Len(t, page.Data, 1)
	require.Equal(t, *page.Data[0].TargetId, fmt.Sprint(byNameCampaign(t, e, "campaign.approve")))
	require.Empty(t, decodeAs[api.AuditEntryPage](t, e.do(e.keyB, http.MethodGet, "/v1/audit-log", nil)).Data, "another account sees none of it")
	future := url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339))
	require.Empty(t, decodeAs[api.AuditEntryPage](t, e.do(e.keyA, http.MethodGet, "/v1/audit-log?since="+future, nil)).Data)

	// The approval event names the approver.
	var actors []string
	rows, err := e.pool.Query(ctx, `SELECT data->>'actor' FROM events WHERE type = 'campaign.approved' ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var a *string
		require.NoError(t, rows.Scan(&a))
		if a != nil {
			actors = append(actors, *a)
		}
	}
	require.NoError(t, rows.Err())
	require.Contains(t, strings.Join(actors, " "), `"label": "Grace (approver)"`)
}

// byNameCampaign is the target of the oldest entry of action.
func byNameCampaign(t *testing.T, e *env, action string) string {
	t.Helper()
	var id string
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT target_id FROM audit_log WHERE action = $1 ORDER BY id LIMIT 1`, action).Scan(&id))
	return id
}

// auditAfterChange are the write routes whose change runs no transaction of its
// own (one statement, or a call out such as a test send or a DNS check), so their
// entry is written right after the change succeeds, before the answer
// (in_change_tx false). Kept by hand: a route that leaves its transaction, or
// moves into one, is a visible change here.
var auditAfterChange = map[string]bool{
	// The members go first in bounded batches, each its own short transaction
	// (a large list must not hold back every account's event readers).
	"DELETE /v1/lists/{id}": true,
	// One statement of the session package; a batch of messages, accepted one
	// message at a time.
	"POST /v1/login-links": true, "POST /v1/messages/batch": true,
	// The people's writes (internal/user) run their own statements, not yet in a
	// transaction the audit hook joins: the entry follows the committed change.
	"PATCH /v1/account/security": true, "POST /v1/invitations": true,
}

// TestAuditWalk walks every write route of the table (a rule with an action) as
// an owner, with the request body of openapi.yaml's example (or {}) and each
// {id} one of the account's resources of the route's kind: an answer 2xx has
// exactly one audit entry of the route's action under its request id, any other
// answer none (what was refused or failed and rolled back left no record). The
// entries written outside the change's transaction are exactly auditAfterChange.
func TestAuditWalk(t *testing.T) {
	t.Parallel()
	e, _ := sessionEnv(t)
	ctx := context.Background()
	acct := decodeAs[api.Account](t, e.do(e.keyA, http.MethodGet, "/v1/account", nil))
	_, owner, err := account.NewService(e.pool).NewKey(ctx, acct.Id, "owner", account.KeySpec{Role: access.RoleOwner})
	require.NoError(t, err)

	doc, err := openapi3.NewLoader().LoadFromData(sendonce.OpenAPI)
	require.NoError(t, err)
	example := func(method, pattern string) any {
		item := doc.Paths.Find(pattern)
		if item == nil {
			return map[string]any{}
		}
		op := item.GetOperation(method)
		if op == nil || op.RequestBody == nil || op.RequestBody.Value == nil {
			return nil
		}
		mt := op.RequestBody.Value.Content.Get("application/json")
		if mt == nil {
			return map[string]any{}
		}
		switch {
		case mt.Example != nil:
			return mt.Example
		case len(mt.Examples) > 0:
			for _, ex := range mt.Examples {
				return ex.Value.Value
			}
		case mt.Schema != nil && mt.Schema.Value != nil && mt.Schema.Value.Example != nil:
			return mt.Schema.Value.Example
		}
		return map[string]any{}
	}

	// One of each kind, so that the {id} routes find something.
	mk := func(path string, body any) int64 {
		res := e.do(owner, http.MethodPost, path, body)
		require.Less(t, res.Status, 300, "%s: %s", path, res.Body)
		var v struct {
			ID int64 `json:"id"`
		}
		require.NoError(t, json.Unmarshal(res.Body, &v))
		return v.ID
	}
	ids := map[string]int64{
		"subscriber":     mk("/v1/subscribers", map[string]any{"email": "ada@example.com", "status": "confirmed"}),
		"list":           mk("/v1/lists", map[string]any{"name": "news"}),
		"template":       mk("/v1/templates", map[string]any{"name": "t", "subject": "Hi", "text": "Hello"}),
		"campaign":       mk("/v1/campaigns", map[string]any{"name": "c", "from_email": "news@example.com", "subject": "Hi", "text_template": "Hello"}),
		"segment":        mk("/v1/segments", example(http.MethodPost, "/v1/segments")),
		"event_endpoint": 0, "webhook_endpoint": 0, "sender": 0, "sequence": 0, "api_key": 0,
	}
	ok, refused, afterChange := 0, 0, map[string]bool{}
	for i, route := range e.tenantRoutes() {
		rule := access.Routes[route]
		if rule.Action == "" {
			continue
		}
		method, pattern, _ := strings.Cut(route, " ")
		id := ids[rule.Target]
		if id == 0 {
			id = 987654321
		}
		rid := fmt.Sprintf("walk-%d", i)
		res := e.do(owner, method, fill(pattern, id), example(method, pattern), "X-Request-Id", rid)
		entries := e.auditOf(rid)
		if res.Status >= 200 && res.Status < 300 {
			ok++
			require.Len(t, entries, 1, "%s answered %d: one entry", route, res.Status)
			require.Equal(t, rule.Action, entries[0].Action, route)
			require.Equal(t, rule.Target, entries[0].TargetType, route)
			require.Equal(t, "owner", entries[0].Actor.Label)
			if !entries[0].InChangeTx {
				afterChange[route] = true
			}
			continue
		}
		refused++
		require.Empty(t, entries, "%s answered %d: no entry (%s)", route, res.Status, res.Body)
	}
	t.Logf("write routes: %d answered 2xx, %d refused or failed; entries written after the change: %v", ok, refused, afterChange)
	require.Equal(t, auditAfterChange, afterChange, "the writes whose entry is not in their transaction")
	require.Greater(t, ok, 15, "the walk made changes")
}
