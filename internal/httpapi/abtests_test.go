package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestABTestAPI: an A/B test is set on a draft only, each bad setting is a 422
// naming its field with nothing changed; approval checks the variants; the report
// counts people per variant with a p-value against the leader; the winner is
// chosen once (a second choice is a 409), with its event.
func TestABTestAPI(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	ctx := context.Background()
	res := e.do(a, "POST", "/v1/campaigns", map[string]any{"name": "c", "subject": "Hi {{.Name}}",
		"from_email": "news@example.com", "text_template": "Hello", "html_template": `<p>Hi <a href="https://shop.example/">shop</a></p>`})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	camp := decodeAs[api.Campaign](t, res)
	path := "/v1/campaigns/" + itoa(camp.Id)
	two := []map[string]any{{"subject": "A {{.Name}}"}, {"subject": "B {{.Name}}"}}
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"mode": "split", "variants": two[:1]}, "/variants"},
		{map[string]any{"mode": "test", "test_percent": 60, "wait_seconds": 3600, "metric": "clicks", "variants": two}, "/test_percent"},
		{map[string]any{"mode": "test", "test_percent": 0, "wait_seconds": 3600, "metric": "clicks", "variants": two}, "/test_percent"},
		{map[string]any{"mode": "test", "test_percent": 10, "wait_seconds": 5, "metric": "clicks", "variants": two}, "/wait_seconds"},
		{map[string]any{"mode": "test", "test_percent": 10, "wait_seconds": 3600, "metric": "likes", "variants": two}, "/metric"},
		{map[string]any{"mode": "split", "variants": []map[string]any{{"subject": "x"}, {"template_id": 999999}}}, "/variants/1/template_id"},
		{map[string]any{"mode": "split", "variants": []map[string]any{{"subject": "x"}, {"subject": "{{.Nope"}}}, "/variants/1/html_template"},
	} {
		res = e.do(a, "PUT", path+"/ab-test", tc.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
		require.Contains(t, decodeAs[problem](t, res).pointers(), tc.field, string(res.Body))
	}
	require.Equal(t, http.StatusNotFound, e.do(a, "GET", path+"/ab-test", nil).Status, "nothing was set")

	res = e.do(a, "PUT", path+"/ab-test", map[string]any{"mode": "test", "test_percent": 50, "wait_seconds": 3600,
		"metric": "manual", "variants": two})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	got := decodeAs[api.ABTest](t, res)
	require.Len(t, got.Variants, 2)
	require.Equal(t, "B", got.Variants[1].Variant)
	require.Equal(t, "B {{.Name}}", *got.Variants[1].Subject)

	// Not sending yet: no winner to choose.
	res = e.do(a, "POST", path+"/winner", map[string]any{"variant": "A"})
	require.Equal(t, http.StatusConflict, res.Status, string(res.Body))

	res = e.do(a, "POST", path+"/approve", map[string]any{})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	res = e.do(a, "PUT", path+"/ab-test", map[string]any{"mode": "split", "variants": two})
	require.Equal(t, http.StatusConflict, res.Status, "variants change only in draft")
	require.Equal(t, http.StatusConflict, e.do(a, "DELETE", path+"/ab-test", nil).Status)

	// As the executor would have it: sending, 40 recipients of the test group sent,
	// people clicked B's twice as often as A's; a bot clicked every A.
	var acct int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT account_id FROM campaigns WHERE id = $1`, camp.Id).Scan(&acct))
	_, err := e.pool.Exec(ctx, `UPDATE campaigns SET status = 'sending', started_at = now() WHERE id = $1`, camp.Id)
	require.NoError(t, err)
	fx := testfactory.New(e.pool)
	first := fx.BulkSubscribers(t, acct, testfactory.Bulk{Prefix: "r", N: 400, Statuses: []string{"confirmed"}})
	// Variant 1 + id % 2: the first (odd or even) id starts the cycle.
	variants := []int16{int16(1 + first%2), int16(1 + (first+1)%2)}
	now := time.Now()
	n, _ := fx.Sends(t, acct, camp.Id, testfactory.Sends{Prefix: "r", After: first - 1, Statuses: []string{"sent"},
		Variants: variants, SentAt: &now})
	require.Equal(t, int64(400), n)
	_, err = e.pool.Exec(ctx, `INSERT INTO tracking_hits (account_id, campaign_id, send_id, kind, link_idx, occurred_at, method, suspected_bot)
		SELECT account_id, campaign_id, id, 'click', 1, now(), 'GET', false FROM sends
		WHERE campaign_id = $1 AND ((variant = 2 AND id % 10 < 4) OR (variant = 1 AND id % 10 < 2))
		UNION ALL
		SELECT account_id, campaign_id, id, 'click', 1, now(), 'GET', true FROM sends WHERE campaign_id = $1 AND variant = 1`, camp.Id)
	require.NoError(t, err)
	res = e.do(a, "GET", path+"/ab-test", nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	rep := *decodeAs[api.ABTest](t, res).Report
	require.Len(t, rep, 2)
	require.Equal(t, int64(200), rep[0].Sent)
	require.Equal(t, int64(40), rep[0].Clicked, "bot clicks left out")
	require.Equal(t, int64(80), rep[1].Clicked)
	require.True(t, rep[1].Leader)
	require.InDelta(t, 0.4, rep[1].ClickRate, 1e-9)
	require.Less(t, rep[0].PValue, 0.001, "40/200 against 80/200 is no noise")
	require.Equal(t, 1.0, rep[1].PValue)

	res = e.do(a, "POST", path+"/winner", map[string]any{"variant": "F"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	res = e.do(a, "POST", path+"/winner", map[string]any{"variant": "C"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "no variant C")
	res = e.do(a, "POST", path+"/winner", map[string]any{"variant": "B"})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	w := decodeAs[api.ABTest](t, res)
	require.Equal(t, "B", *w.Winner)
	require.Equal(t, api.ABTestChosenBy("manual"), *w.ChosenBy)
	res = e.do(a, "POST", path+"/winner", map[string]any{"variant": "A"})
	require.Equal(t, http.StatusConflict, res.Status, "chosen once")
	var events int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE type = 'campaign.winner_chosen'
		AND data->>'variant' = 'B' AND data->>'chosen_by' = 'manual'`).Scan(&events))
	require.Equal(t, 1, events)
	var audits int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'campaign.winner_choose'`).Scan(&audits))
	require.Equal(t, 1, audits, "one audit entry: the choice that changed something")
}

// TestABTestApprovalChecksVariantLinks: with click tracking on, a variant whose
// HTML carries other links than the campaign's cannot be approved (the tracked
// links are stored per campaign, by position).
func TestABTestApprovalChecksVariantLinks(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	res := e.do(a, "POST", "/v1/campaigns", map[string]any{"name": "c", "subject": "Hi",
		"from_email": "news@example.com", "html_template": `<a href="https://shop.example/">shop</a>`})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	path := "/v1/campaigns/" + itoa(decodeAs[api.Campaign](t, res).Id)
	res = e.do(a, "PUT", path+"/ab-test", map[string]any{"mode": "split", "variants": []map[string]any{
		{"subject": "x"}, {"html_template": `<a href="https://other.example/">other</a>`}}})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	res = e.do(a, "POST", path+"/approve", map[string]any{})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Equal(t, []string{"/variants/1/html_template"}, decodeAs[problem](t, res).pointers())
	res = e.do(a, "GET", path, nil)
	require.Equal(t, "draft", string(decodeAs[api.Campaign](t, res).Status), "nothing changed")
}

// An A/B test with a test group and a local delivery time do not combine (the
// winner goes to the rest at once): approval is 422 naming /deliver_at_local and
// leaves the draft; a split test with a local time is approved.
func TestABTestWithLocalTimeRefused(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	res := e.do(a, "POST", "/v1/campaigns", map[string]any{"name": "c", "subject": "Hi", "text_template": "Hi",
		"from_email": "news@example.com", "deliver_at_local": "09:00"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	path := "/v1/campaigns/" + itoa(decodeAs[api.Campaign](t, res).Id)
	two := []map[string]any{{"subject": "A"}, {"subject": "B"}}
	res = e.do(a, "PUT", path+"/ab-test", map[string]any{"mode": "test", "test_percent": 20, "wait_seconds": 3600,
		"metric": "clicks", "variants": two})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	res = e.do(a, "POST", path+"/approve", map[string]any{})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Equal(t, []string{"/deliver_at_local"}, decodeAs[problem](t, res).pointers())
	require.Equal(t, "draft", string(decodeAs[api.Campaign](t, e.do(a, "GET", path, nil)).Status), "nothing changed")

	res = e.do(a, "PUT", path+"/ab-test", map[string]any{"mode": "split", "variants": two})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	res = e.do(a, "POST", path+"/approve", map[string]any{})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
}
