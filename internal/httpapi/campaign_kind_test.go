package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestCampaignRoutesRefuseOtherKinds: a sequence step's campaign and an account's
// transactional message stream are campaigns rows too, but no campaign of the API.
// Every /v1/campaigns/{id} route answers 404 for their ids and changes nothing —
// the row, its sends and its attachments are as before. Resume once turned a paused
// sequence's step campaign back to sending while the sequence stayed paused.
func TestCampaignRoutesRefuseOtherKinds(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	ctx := context.Background()

	res := e.do(a, "POST", "/v1/templates", map[string]any{"name": "w", "subject": "Welcome", "text": "Hi"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	newSequence := func(name string) int64 {
		res := e.do(a, "POST", "/v1/sequences", map[string]any{"name": name, "trigger": map[string]any{"type": "manual"},
			"steps": []any{map[string]any{"type": "send", "template_id": tpl.Id, "from_email": "hello@example.com"}}})
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
		seq := decodeAs[api.Sequence](t, res)
		res = e.do(a, "POST", "/v1/sequences/"+itoa(seq.Id)+"/activate", nil)
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
		return seq.Id
	}
	stepCampaign := func(seqID int64) int64 {
		var id int64
		require.NoError(t, e.pool.QueryRow(ctx,
			`SELECT campaign_id FROM sequence_steps WHERE sequence_id = $1 AND position = 0`, seqID).Scan(&id))
		return id
	}
	active := stepCampaign(newSequence("active"))
	pausedSeq := newSequence("paused")
	res = e.do(a, "POST", "/v1/sequences/"+itoa(pausedSeq)+"/pause", nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	paused := stepCampaign(pausedSeq)

	res = e.do(a, "POST", "/v1/messages", receipt(nil), "Idempotency-Key", "kind-guard-1")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	var stream int64
	require.NoError(t, e.pool.QueryRow(ctx,
		`SELECT id FROM campaigns WHERE kind = 'messages' AND account_id = (SELECT account_id FROM campaigns WHERE id = $1)`,
		active).Scan(&stream))

	// snapshot is everything a route could change about a campaign.
	snapshot := func(id int64) string {
		var s string
		require.NoError(t, e.pool.QueryRow(ctx, `
			SELECT jsonb_build_object(
			    'row', (SELECT to_jsonb(c) FROM campaigns c WHERE c.id = $1),
			    'sends', (SELECT coalesce(jsonb_agg(to_jsonb(s) ORDER BY s.id), '[]') FROM sends s WHERE s.campaign_id = $1),
			    'files', (SELECT count(*) FROM campaign_attachments f WHERE f.campaign_id = $1))::text`, id).Scan(&s))
		return s
	}
	for _, k := range []struct {
		name   string
		id     int64
		status string
	}{{"sequence step, active", active, "sending"}, {"sequence step, paused", paused, "paused"}, {"message stream", stream, "sending"}} {
		var status string
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT status FROM campaigns WHERE id = $1`, k.id).Scan(&status))
		require.Equal(t, k.status, status, k.name)
		p := "/v1/campaigns/" + itoa(k.id)
		for _, r := range []struct {
			method, path string
			body         any
		}{
			{"GET", p, nil},
			{"PATCH", p, map[string]any{"subject": "changed"}},
			{"PATCH", p, map[string]any{"archive": true}},
			{"DELETE", p, nil},
			{"POST", p + "/approve", nil},
			{"POST", p + "/unapprove", nil},
			{"POST", p + "/pause", nil},
			{"POST", p + "/resume", nil},
			{"POST", p + "/cancel", nil},
			{"POST", p + "/test", map[string]any{"emails": []string{"me@example.com"}}},
			{"GET", p + "/stats", nil},
			{"GET", p + "/sends", nil},
			{"GET", p + "/sends?email=ada@example.com", nil},
			{"GET", p + "/timeline", nil},
			{"GET", p + "/events", nil},
			{"GET", p + "/clicks", nil},
		} {
			before := snapshot(k.id)
			res := e.do(a, r.method, r.path, r.body)
			require.Equal(t, http.StatusNotFound, res.Status, "%s: %s %s: %s", k.name, r.method, r.path, res.Body)
			require.Equal(t, before, snapshot(k.id), "%s: %s %s changed the campaign", k.name, r.method, r.path)
		}
	}
}
