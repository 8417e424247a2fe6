package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

func TestSegments(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	for i, attrs := range []map[string]any{{"plan": "pro", "seats": 12}, {"plan": "pro", "seats": 2}, {"plan": "free"}} {
		res := e.do(a, "POST", "/v1/subscribers", map[string]any{"email": "s" + itoa(int64(i)) + "@example.com",
			"status": "confirmed", "attributes": attrs})
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	}

	// The parser's refusal in words, with where it stopped, on /match, and nothing stored.
	res := e.do(a, "POST", "/v1/segments", map[string]any{"name": "bad", "match": `$.plan == "pro" &&`})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	p := decodeAs[problem](t, res)
	require.Equal(t, []string{"/match"}, p.pointers())
	require.Contains(t, string(res.Body), "ends too early, after character 18")

	res = e.do(a, "POST", "/v1/segments", map[string]any{"name": "pro teams", "match": `$.plan == "pro" && $.seats > 5`,
		"statuses": []string{"confirmed"}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	g := decodeAs[api.Segment](t, res)
	require.Contains(t, g.Match, `"pro"`)
	res = e.do(a, "POST", "/v1/segments", map[string]any{"name": "pro teams"})
	require.Equal(t, http.StatusConflict, res.Status)
	res = e.do(a, "POST", "/v1/segments", map[string]any{"name": "x", "statuses": []string{"deleted"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)

	res = e.do(a, "POST", "/v1/segments/preview", map[string]any{"match": `$.plan == "pro"`})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	pv := decodeAs[api.SegmentPreview](t, res)
	require.EqualValues(t, 2, pv.Count)
	require.Len(t, pv.Sample, 2)
	res = e.do(a, "POST", "/v1/segments/preview", map[string]any{"match": `$.plan == 'pro'`})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/match"}, decodeAs[problem](t, res).pointers())

	res = e.do(a, "GET", "/v1/segments/"+itoa(g.Id), nil)
	require.Equal(t, http.StatusOK, res.Status)
	res = e.do(a, "GET", "/v1/segments", nil)
	require.Len(t, decodeAs[api.SegmentPage](t, res).Data, 1)
	res = e.do(a, "PUT", "/v1/segments/"+itoa(g.Id), map[string]any{"name": "pro", "match": `$.plan == "pro"`})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Empty(t, decodeAs[api.Segment](t, res).Statuses, "PUT replaces the whole filter")

	// Campaigns take the account's own segments only; a segment in use cannot go.
	camp := map[string]any{"name": "c", "subject": "s", "from_email": "news@example.com", "text_template": "t",
		"segment_id": g.Id}
	res = e.do(e.keyB, "POST", "/v1/campaigns", camp)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/segment_id"}, decodeAs[problem](t, res).pointers())
	res = e.do(a, "POST", "/v1/campaigns", camp)
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	c := decodeAs[api.Campaign](t, res)
	require.Equal(t, g.Id, *c.SegmentId)
	res = e.do(a, "DELETE", "/v1/segments/"+itoa(g.Id), nil)
	require.Equal(t, http.StatusConflict, res.Status)
	res = e.do(a, "PATCH", "/v1/campaigns/"+itoa(c.Id), map[string]any{"segment_id": nil})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Nil(t, decodeAs[api.Campaign](t, res).SegmentId)
	res = e.do(a, "DELETE", "/v1/segments/"+itoa(g.Id), nil)
	require.Equal(t, http.StatusNoContent, res.Status)
}

// A jsonpath variable has no value in a segment: saving one answered 201 and its
// preview 500 (could not find jsonpath variable, 42704); both are 422 on /match. A
// campaign that could not start shows it: status failed, with failed_reason.
func TestSegmentVariablesAreRefusedAndAFailedCampaignSaysWhy(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	// With a subscriber to evaluate the predicate on (with none, it is never evaluated).
	res := e.do(a, "POST", "/v1/subscribers", map[string]any{"email": "s@example.com", "status": "confirmed"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	res = e.do(a, "POST", "/v1/segments", map[string]any{"name": "var", "match": `$x == 1`})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Equal(t, []string{"/match"}, decodeAs[problem](t, res).pointers())
	res = e.do(a, "POST", "/v1/segments/preview", map[string]any{"match": `$email == "x"`})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Equal(t, []string{"/match"}, decodeAs[problem](t, res).pointers())

	res = e.do(a, "POST", "/v1/campaigns", map[string]any{"name": "c", "subject": "s", "from_email": "news@example.com",
		"text_template": "t"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	c := decodeAs[api.Campaign](t, res)
	require.Nil(t, c.FailedReason)
	// As the executor leaves a campaign whose segment cannot be evaluated.
	_, err := e.pool.Exec(context.Background(), `UPDATE campaigns SET status = 'failed',
		failed_reason = 'the segment cannot be evaluated: could not find jsonpath variable "x"' WHERE id = $1`, c.Id)
	require.NoError(t, err)
	res = e.do(a, "GET", "/v1/campaigns/"+itoa(c.Id), nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	c = decodeAs[api.Campaign](t, res)
	require.Equal(t, api.CampaignStatusFailed, c.Status)
	require.Contains(t, *c.FailedReason, `jsonpath variable "x"`)
}
