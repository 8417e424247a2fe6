package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/subscriber"
	"github.com/sendonce/sendonce/internal/testfactory"
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
	require.True(t, pv.Exact)
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

	// Past subscriber.CountBound the preview's count stops there and says so.
	var acct int64
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT account_id FROM subscribers WHERE email_lower = 's0@example.com'`).
		Scan(&acct))
	testfactory.New(e.pool).Subscribers(t, acct, "n", subscriber.CountBound, "confirmed")
	res = e.do(a, "POST", "/v1/segments/preview", map[string]any{"statuses": []string{"confirmed"}})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	pv = decodeAs[api.SegmentPreview](t, res)
	require.EqualValues(t, subscriber.CountBound, pv.Count)
	require.False(t, pv.Exact)
	require.Len(t, pv.Sample, 10)
	res = e.do(e.keyB, "POST", "/v1/segments/preview", map[string]any{"statuses": []string{"confirmed"}})
	pv = decodeAs[api.SegmentPreview](t, res)
	require.Zero(t, pv.Count, "another account's subscribers")
	require.True(t, pv.Exact)
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

// TestSegmentEngagementOverTheAPI: an engagement condition is stored and answered
// as given (people_only defaulting to true); another account's campaign, an
// unknown one and days out of bounds are 422s naming the field, with nothing
// stored; the preview counts the people who received the campaign and did not open it.
func TestSegmentEngagementOverTheAPI(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	camp := map[string]any{"name": "c", "subject": "s", "from_email": "news@example.com", "text_template": "t"}
	res := e.do(a, "POST", "/v1/campaigns", camp)
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	mine := decodeAs[api.Campaign](t, res).Id
	res = e.do(e.keyB, "POST", "/v1/campaigns", camp)
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	theirs := decodeAs[api.Campaign](t, res).Id

	for _, bad := range []struct {
		engagement map[string]any
		pointer    string
	}{
		{map[string]any{"kind": "opened", "campaign_id": theirs}, "/engagement/campaign_id"},
		{map[string]any{"kind": "opened", "campaign_id": theirs + 1000}, "/engagement/campaign_id"},
		{map[string]any{"kind": "opened", "within_days": 366}, "/engagement/within_days"},
		{map[string]any{"kind": "opened", "within_days": 0}, "/engagement/within_days"},
		{map[string]any{"kind": "opened", "campaign_id": mine, "within_days": 3}, "/engagement/within_days"},
	} {
		res = e.do(a, "POST", "/v1/segments", map[string]any{"name": "bad", "engagement": bad.engagement})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", bad.engagement, res.Body)
		require.Equal(t, []string{bad.pointer}, decodeAs[problem](t, res).pointers(), "%v", bad.engagement)
		res = e.do(a, "POST", "/v1/segments/preview", map[string]any{"engagement": bad.engagement})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", bad.engagement, res.Body)
	}
	res = e.do(a, "GET", "/v1/segments", nil)
	require.Empty(t, decodeAs[api.SegmentPage](t, res).Data, "nothing stored")

	res = e.do(a, "POST", "/v1/segments", map[string]any{"name": "non-openers",
		"engagement": map[string]any{"kind": "opened", "negated": true, "campaign_id": mine}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	g := decodeAs[api.Segment](t, res)
	require.NotNil(t, g.Engagement)
	require.Equal(t, api.Opened, g.Engagement.Kind)
	require.Equal(t, mine, *g.Engagement.CampaignId)
	require.True(t, *g.Engagement.Negated)
	require.True(t, *g.Engagement.PeopleOnly, "people only unless asked")
	require.Nil(t, g.Engagement.WithinDays)

	// Two subscribers, one sent the campaign (a send row, as the executor writes it).
	var ids []int64
	for _, email := range []string{"got@example.com", "never@example.com"} {
		res = e.do(a, "POST", "/v1/subscribers", map[string]any{"email": email, "status": "confirmed"})
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
		ids = append(ids, decodeAs[api.Subscriber](t, res).Id)
	}
	var acct int64
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT account_id FROM campaigns WHERE id = $1`, mine).Scan(&acct))
	now := time.Now()
	testfactory.New(e.pool).Send(t, acct, mine, ids[0], testfactory.Send{Email: "got@example.com", Status: "sent", SentAt: &now})
	res = e.do(a, "POST", "/v1/segments/preview", map[string]any{
		"engagement": map[string]any{"kind": "opened", "negated": true, "campaign_id": mine}})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	pv := decodeAs[api.SegmentPreview](t, res)
	require.EqualValues(t, 1, pv.Count, "received and did not open; never-sent is not a non-opener")
	require.Equal(t, ids[0], pv.Sample[0].Id)

	// PUT without engagement clears it.
	res = e.do(a, "PUT", "/v1/segments/"+itoa(g.Id), map[string]any{"name": "everyone"})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Nil(t, decodeAs[api.Segment](t, res).Engagement)
}

// GET /v1/segments?name= narrows to names holding the text in any case, pages
// within the narrowed set, keeps to the account, and refuses an over-long text.
func TestSegmentsNameFilter(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, n := range []string{"Pro teams", "free plan", "PRO trial", "churned", "approved pros"} {
		res := e.do(e.keyA, "POST", "/v1/segments", map[string]any{"name": n})
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	}
	res := e.do(e.keyB, "POST", "/v1/segments", map[string]any{"name": "pro elsewhere"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))

	names := func(p api.SegmentPage) []string {
		var out []string
		for _, g := range p.Data {
			out = append(out, g.Name)
		}
		return out
	}
	res = e.do(e.keyA, "GET", "/v1/segments?name=%20pRo%20", nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Equal(t, []string{"Pro teams", "PRO trial", "approved pros"}, names(decodeAs[api.SegmentPage](t, res)))

	res = e.do(e.keyA, "GET", "/v1/segments?name=pro&limit=2", nil)
	first := decodeAs[api.SegmentPage](t, res)
	require.Equal(t, []string{"Pro teams", "PRO trial"}, names(first))
	require.NotNil(t, first.NextCursor)
	res = e.do(e.keyA, "GET", "/v1/segments?name=pro&limit=2&cursor="+*first.NextCursor, nil)
	second := decodeAs[api.SegmentPage](t, res)
	require.Equal(t, []string{"approved pros"}, names(second))
	require.Nil(t, second.NextCursor)

	res = e.do(e.keyA, "GET", "/v1/segments?name=nothing-like-it", nil)
	require.Empty(t, decodeAs[api.SegmentPage](t, res).Data)
	res = e.do(e.keyA, "GET", "/v1/segments?name=", nil)
	require.Len(t, decodeAs[api.SegmentPage](t, res).Data, 5)

	long := make([]byte, 201)
	for i := range long {
		long[i] = 'a'
	}
	res = e.do(e.keyA, "GET", "/v1/segments?name="+string(long), nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/name"}, decodeAs[problem](t, res).pointers())
}
