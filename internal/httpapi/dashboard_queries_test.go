package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestListingsTheDashboardNeeds holds the queries a dashboard page makes beside its
// table: campaigns newest first past any page (the one made last is on the first
// page, the cursor continues downwards and is not accepted by the other order), the
// newest events first (the "recent" list, however many older ones the window
// holds), messages newest first with their subject, one address's suppression, a
// subscriber total under the
// listing's filters, and an import's status
// for rows that name none. Another account's data is never counted or listed.
func TestListingsTheDashboardNeeds(t *testing.T) {
	t.Parallel()
	e := setup(t)

	// Campaigns, newest first, paged.
	var ids []int64
	for i := range 5 {
		c := decodeAs[api.Campaign](t, e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": fmt.Sprintf("c%d", i),
			"from_email": "news@example.com", "subject": "Hi", "text_template": "Hello"}))
		ids = append(ids, c.Id)
	}
	e.do(e.keyB, "POST", "/v1/campaigns", map[string]any{"name": "other", "from_email": "news@example.com", "subject": "Hi", "text_template": "Hello"})
	res := e.do(e.keyA, "GET", "/v1/campaigns?order=newest&limit=2", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	p1 := decodeAs[api.CampaignPage](t, res)
	require.Equal(t, []int64{ids[4], ids[3]}, []int64{p1.Data[0].Id, p1.Data[1].Id})
	require.NotNil(t, p1.NextCursor)
	p2 := decodeAs[api.CampaignPage](t, e.do(e.keyA, "GET", "/v1/campaigns?order=newest&limit=2&cursor="+*p1.NextCursor, nil))
	require.Equal(t, []int64{ids[2], ids[1]}, []int64{p2.Data[0].Id, p2.Data[1].Id})
	p3 := decodeAs[api.CampaignPage](t, e.do(e.keyA, "GET", "/v1/campaigns?order=newest&limit=2&cursor="+*p2.NextCursor, nil))
	require.Len(t, p3.Data, 1)
	require.Equal(t, ids[0], p3.Data[0].Id)
	require.Nil(t, p3.NextCursor)
	res = e.do(e.keyA, "GET", "/v1/campaigns?limit=2&cursor="+*p1.NextCursor, nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "a newest-first cursor does not page the oldest-first listing")
	res = e.do(e.keyA, "GET", "/v1/campaigns?order=sideways", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/order"}, decodeAs[problem](t, res).pointers())

	// Messages, newest first, with their subject.
	for i := range 3 {
		res := e.do(e.keyA, "POST", "/v1/messages", map[string]any{"to": "ada@example.com", "from": "shop@example.com",
			"subject": fmt.Sprintf("Receipt %d", i), "text": "Thanks"}, "Idempotency-Key", fmt.Sprintf("receipt-%d", i))
		require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	}
	m1 := decodeAs[api.MessagePage](t, e.do(e.keyA, "GET", "/v1/messages?order=newest&limit=2", nil))
	require.Equal(t, []string{"Receipt 2", "Receipt 1"}, []string{m1.Data[0].Subject, m1.Data[1].Subject})
	require.NotNil(t, m1.NextCursor)
	m2 := decodeAs[api.MessagePage](t, e.do(e.keyA, "GET", "/v1/messages?order=newest&limit=2&cursor="+*m1.NextCursor, nil))
	require.Len(t, m2.Data, 1)
	require.Equal(t, "Receipt 0", m2.Data[0].Subject)
	require.Empty(t, decodeAs[api.MessagePage](t, e.do(e.keyB, "GET", "/v1/messages?order=newest", nil)).Data)

	// The newest events first.
	for i := range 4 {
		e.do(e.keyA, "POST", "/v1/suppressions", map[string]any{"email": fmt.Sprintf("gone%d@example.com", i), "reason": "manual"})
	}
	e.do(e.keyB, "POST", "/v1/suppressions", map[string]any{"email": "b@example.com", "reason": "manual"})
	var newest api.EventPage
	require.Eventually(t, func() bool { // an event is listed once below the horizon
		newest = decodeAs[api.EventPage](t, e.do(e.keyA, "GET", "/v1/events?type=suppression.created&order=newest&limit=2", nil))
		return len(newest.Data) == 2 && fmt.Sprint(newest.Data[0].Data["email"]) == "gone3@example.com"
	}, 10*time.Second, 50*time.Millisecond, "%+v", newest)
	require.Equal(t, "gone2@example.com", fmt.Sprint(newest.Data[1].Data["email"]))
	require.Nil(t, newest.NextCursor)
	// One address's suppression, in any case; another account's is not found.
	sup := decodeAs[api.Suppression](t, e.do(e.keyA, "GET", "/v1/suppressions/Gone1@Example.com", nil))
	require.Equal(t, "gone1@example.com", sup.Email)
	require.EqualValues(t, "manual", sup.Reason)
	require.Equal(t, http.StatusNotFound, e.do(e.keyA, "GET", "/v1/suppressions/nobody@example.com", nil).Status)
	require.Equal(t, http.StatusNotFound, e.do(e.keyB, "GET", "/v1/suppressions/gone1@example.com", nil).Status)
	require.Equal(t, http.StatusUnprocessableEntity, e.do(e.keyA, "GET", "/v1/suppressions/not-an-address", nil).Status)

	res = e.do(e.keyA, "GET", "/v1/events?order=newest&after=x", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/after"}, decodeAs[problem](t, res).pointers())

	// An import's status for rows without one, and the total under the filters.
	res = e.do(e.keyA, "POST", "/v1/subscribers/import?status=confirmed", "email,status\nann@example.com,\nbob@example.com,pending\ncy@example.com,\n", "Content-Type", "text/csv")
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	e.do(e.keyA, "POST", "/v1/subscribers/import", "email\ndee@example.com\n", "Content-Type", "text/csv")
	e.do(e.keyB, "POST", "/v1/subscribers/import?status=confirmed", "email\nann@example.com\n", "Content-Type", "text/csv")
	count := func(q string) api.SubscriberCount {
		t.Helper()
		res := e.do(e.keyA, "GET", "/v1/subscribers/count"+q, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		return decodeAs[api.SubscriberCount](t, res)
	}
	require.Equal(t, api.SubscriberCount{Count: 4, Exact: true}, count(""))
	require.Equal(t, api.SubscriberCount{Count: 2, Exact: true}, count("?status=confirmed"), "the rows without a status are confirmed")
	require.Equal(t, api.SubscriberCount{Count: 2, Exact: true}, count("?status=pending"), "a row's own status wins; no ?status= keeps pending")
	require.Equal(t, api.SubscriberCount{Count: 1, Exact: true}, count("?email=an"))
	res = e.do(e.keyA, "POST", "/v1/subscribers/import?status=unsubscribed", "email\nx@example.com\n", "Content-Type", "text/csv")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, api.SubscriberCount{Count: 4, Exact: true}, count(""), "a refused import changes nothing")
}
