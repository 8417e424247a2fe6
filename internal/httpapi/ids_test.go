package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestRequestIDsArePositive: ids are ≥ 1. An id of 0 or below anywhere in a request
// body — sender_id, template_id, segment_id, list_id, subscriber_id, an element of
// list_ids or subscriber_ids — is a 422 naming the field, and nothing is created or
// changed. "sender_id": 0 once created a campaign with no sender (201).
func TestRequestIDsArePositive(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	ctx := context.Background()
	created := func(path string, body any) int64 {
		res := e.do(a, "POST", path, body)
		require.Equal(t, http.StatusCreated, res.Status, "%s: %s", path, res.Body)
		return decodeAs[struct {
			ID int64 `json:"id"`
		}](t, res).ID
	}
	tpl := created("/v1/templates", map[string]any{"name": "w", "subject": "Welcome", "text": "Hi"})
	list := created("/v1/lists", map[string]any{"name": "news"})
	sub := created("/v1/subscribers", map[string]any{"email": "ada@example.com", "status": "confirmed"})
	camp := created("/v1/campaigns", map[string]any{"name": "c", "subject": "S", "from_email": "a@example.com", "text_template": "Hi"})
	seg := created("/v1/segments", map[string]any{"name": "s", "match": `$."plan" == "pro"`})
	step := func(extra map[string]any) map[string]any {
		s := map[string]any{"type": "send", "template_id": tpl, "from_email": "hello@example.com"}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	seqBody := func(trigger map[string]any, steps ...any) map[string]any {
		if len(steps) == 0 {
			steps = []any{step(nil)}
		}
		return map[string]any{"name": "q", "trigger": trigger, "steps": steps}
	}
	manual := map[string]any{"type": "manual"}
	seq := created("/v1/sequences", seqBody(manual))
	require.Equal(t, http.StatusOK, e.do(a, "POST", "/v1/sequences/"+itoa(seq)+"/activate", nil).Status)
	campaign := func(extra map[string]any) map[string]any {
		c := map[string]any{"name": "c", "subject": "S", "from_email": "a@example.com", "text_template": "Hi"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}

	// snapshot is every row a refused body could have created or changed.
	snapshot := func() string {
		var s string
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT jsonb_build_array(
			(SELECT jsonb_agg(to_jsonb(c) ORDER BY id) FROM campaigns c),
			(SELECT jsonb_agg(to_jsonb(l) ORDER BY id) FROM lists l),
			(SELECT count(*) FROM list_members), (SELECT count(*) FROM segments), (SELECT count(*) FROM subscribers),
			(SELECT count(*) FROM messages), (SELECT jsonb_agg(to_jsonb(q) ORDER BY id) FROM sequences q),
			(SELECT count(*) FROM sequence_enrollments))::text`).Scan(&s))
		return s
	}
	before := snapshot()
	campPath, listPath, segPath, seqPath := "/v1/campaigns/"+itoa(camp), "/v1/lists/"+itoa(list), "/v1/segments/"+itoa(seg), "/v1/sequences/"+itoa(seq)
	for _, bad := range []int64{0, -1} {
		for _, c := range []struct {
			method, path string
			body         map[string]any
			pointer      string
		}{
			{"POST", "/v1/campaigns", campaign(map[string]any{"sender_id": bad}), "/sender_id"},
			{"POST", "/v1/campaigns", campaign(map[string]any{"template_id": bad}), "/template_id"},
			{"POST", "/v1/campaigns", campaign(map[string]any{"segment_id": bad}), "/segment_id"},
			{"POST", "/v1/campaigns", campaign(map[string]any{"list_ids": []int64{list, bad}}), "/list_ids/1"},
			{"PATCH", campPath, map[string]any{"sender_id": bad}, "/sender_id"},
			{"PATCH", campPath, map[string]any{"template_id": bad}, "/template_id"},
			{"PATCH", campPath, map[string]any{"segment_id": bad}, "/segment_id"},
			{"PATCH", campPath, map[string]any{"list_ids": []int64{bad}}, "/list_ids/0"},
			{"POST", "/v1/lists", map[string]any{"name": "x", "optin_template_id": bad}, "/optin_template_id"},
			{"PATCH", listPath, map[string]any{"optin_template_id": bad}, "/optin_template_id"},
			{"POST", listPath + "/members", map[string]any{"subscriber_ids": []int64{sub, bad}}, "/subscriber_ids/1"},
			{"DELETE", listPath + "/members", map[string]any{"subscriber_ids": []int64{bad}}, "/subscriber_ids/0"},
			{"POST", "/v1/segments", map[string]any{"name": "x", "match": `$."a" == 1`, "list_ids": []int64{bad}}, "/list_ids/0"},
			{"PUT", segPath, map[string]any{"name": "x", "match": `$."a" == 1`, "list_ids": []int64{bad}}, "/list_ids/0"},
			{"POST", "/v1/segments/preview", map[string]any{"match": `$."a" == 1`, "list_ids": []int64{bad}}, "/list_ids/0"},
			{"POST", "/v1/messages", receipt(map[string]any{"sender_id": bad}), "/sender_id"},
			{"POST", "/v1/messages", receipt(map[string]any{"pool_id": bad}), "/pool_id"},
			{"POST", "/v1/messages", map[string]any{"to": "ada@example.com", "from": "shop@example.com", "template_id": bad}, "/template_id"},
			{"POST", "/v1/sequences", seqBody(map[string]any{"type": "list_joined", "list_id": bad}), "/trigger/list_id"},
			{"POST", "/v1/sequences", seqBody(map[string]any{"type": "segment_entered", "segment_id": bad}), "/trigger/segment_id"},
			{"POST", "/v1/sequences", seqBody(manual, step(map[string]any{"template_id": bad})), "/steps/0/template_id"},
			{"PUT", seqPath, seqBody(manual, step(nil), step(map[string]any{"sender_id": bad})), "/steps/1/sender_id"},
			{"PUT", seqPath, seqBody(manual, step(nil), step(map[string]any{"pool_id": bad})), "/steps/1/pool_id"},
			{"POST", seqPath + "/enroll", map[string]any{"subscriber_id": bad}, "/subscriber_id"},
			{"POST", "/v1/domains/check", map[string]any{"domain": "example.com", "sender_id": bad}, "/sender_id"},
		} {
			res := e.do(a, c.method, c.path, c.body, "Idempotency-Key", "ids-"+itoa(bad)+c.method+c.path+c.pointer)
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%d at %s %s %s: %s", bad, c.method, c.path, c.pointer, res.Body)
			require.Contains(t, decodeAs[problem](t, res).pointers(), c.pointer, "%d at %s %s: %s", bad, c.method, c.path, res.Body)
		}
	}
	require.Equal(t, before, snapshot(), "a refused id changed something")

	// null, not 0, is how an update clears a reference.
	res := e.do(a, "PATCH", campPath, map[string]any{"segment_id": seg})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.NotNil(t, decodeAs[api.Campaign](t, res).SegmentId)
	res = e.do(a, "PATCH", campPath, map[string]any{"segment_id": nil, "sender_id": nil})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	c := decodeAs[api.Campaign](t, res)
	require.Nil(t, c.SegmentId)
	require.Nil(t, c.SenderId)
	res = e.do(a, "PATCH", listPath, map[string]any{"optin_template_id": tpl})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.NotNil(t, decodeAs[api.List](t, res).OptinTemplateId)
	res = e.do(a, "PATCH", listPath, map[string]any{"optin_template_id": nil})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Nil(t, decodeAs[api.List](t, res).OptinTemplateId)
}
