package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

func TestListsAndMembers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "news", "description": "weekly"})
	require.Equal(t, http.StatusCreated, res.Status)
	l := decodeAs[api.List](t, res)
	res = e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "news"})
	require.Equal(t, http.StatusConflict, res.Status)

	var ids []int64
	for _, em := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		res = e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": em})
		ids = append(ids, decodeAs[api.Subscriber](t, res).Id)
	}
	lid := itoa(l.Id)
	res = e.do(e.keyA, "POST", "/v1/lists/"+lid+"/members", map[string]any{"subscriber_ids": ids[:2]})
	require.Equal(t, http.StatusOK, res.Status)
	require.EqualValues(t, 2, decodeAs[api.MemberChange](t, res).Changed)
	res = e.do(e.keyA, "POST", "/v1/lists/"+lid+"/members", map[string]any{"subscriber_ids": ids})
	require.EqualValues(t, 1, decodeAs[api.MemberChange](t, res).Changed, "members already in are left alone")

	res = e.do(e.keyA, "POST", "/v1/lists/"+lid+"/members", map[string]any{"subscriber_ids": []int64{ids[0], 987654}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/subscriber_ids/1"}, decodeAs[problem](t, res).pointers())

	res = e.do(e.keyA, "GET", "/v1/subscribers?list_id="+lid, nil)
	require.Len(t, decodeAs[api.SubscriberPage](t, res).Data, 3)

	res = e.do(e.keyA, "DELETE", "/v1/lists/"+lid+"/members", map[string]any{"subscriber_ids": ids[:1]})
	require.EqualValues(t, 1, decodeAs[api.MemberChange](t, res).Changed)
	res = e.do(e.keyA, "GET", "/v1/lists/"+lid, nil)
	require.EqualValues(t, 2, decodeAs[api.List](t, res).MemberCount)

	res = e.do(e.keyA, "PATCH", "/v1/lists/"+lid, map[string]any{"name": "renamed"})
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, "renamed", decodeAs[api.List](t, res).Name)
	require.Equal(t, "weekly", decodeAs[api.List](t, res).Description)

	res = e.do(e.keyA, "DELETE", "/v1/lists/"+lid, nil)
	require.Equal(t, http.StatusNoContent, res.Status)
	res = e.do(e.keyA, "GET", "/v1/subscribers/"+itoa(ids[0]), nil)
	require.Equal(t, http.StatusOK, res.Status, "deleting a list keeps its subscribers")
}

func TestSuppressions(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "Out@Example.com", "status": "confirmed"})
	sub := decodeAs[api.Subscriber](t, res)

	res = e.do(e.keyA, "POST", "/v1/suppressions", map[string]any{"email": "out@example.com", "reason": "unsubscribe", "source": "support"})
	require.Equal(t, http.StatusCreated, res.Status)
	require.Equal(t, "out@example.com", decodeAs[api.Suppression](t, res).Email)
	res = e.do(e.keyA, "POST", "/v1/suppressions", map[string]any{"email": "OUT@example.com", "reason": "complaint"})
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, api.SuppressionReason("unsubscribe"), decodeAs[api.Suppression](t, res).Reason, "the first record is kept")
	res = e.do(e.keyA, "GET", "/v1/subscribers/"+itoa(sub.Id), nil)
	require.Equal(t, api.SubscriberStatus("unsubscribed"), decodeAs[api.Subscriber](t, res).Status)

	res = e.do(e.keyA, "POST", "/v1/suppressions", map[string]any{"email": "x@example.com", "reason": "bogus"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/reason"}, decodeAs[problem](t, res).pointers())

	for _, em := range []string{"b@example.com", "a@example.com"} {
		res = e.do(e.keyA, "POST", "/v1/suppressions", map[string]any{"email": em})
		require.Equal(t, http.StatusCreated, res.Status)
	}
	res = e.do(e.keyA, "GET", "/v1/suppressions?limit=2", nil)
	page := decodeAs[api.SuppressionPage](t, res)
	require.Equal(t, "a@example.com", page.Data[0].Email)
	require.Equal(t, "b@example.com", page.Data[1].Email)
	res = e.do(e.keyA, "GET", "/v1/suppressions?limit=2&cursor="+*page.NextCursor, nil)
	page = decodeAs[api.SuppressionPage](t, res)
	require.Len(t, page.Data, 1)
	require.Nil(t, page.NextCursor)

	res = e.do(e.keyA, "DELETE", "/v1/suppressions/"+url.PathEscape("Out@Example.com"), nil)
	require.Equal(t, http.StatusNoContent, res.Status)
	res = e.do(e.keyA, "DELETE", "/v1/suppressions/out%40example.com", nil)
	require.Equal(t, http.StatusNotFound, res.Status)
}

// TestEmptyCursorIsFirstPage: `?cursor=` (what a client generated from the spec's
// example sends) is the first page, not a 422.
func TestEmptyCursorIsFirstPage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	require.Equal(t, http.StatusCreated, e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "a"}).Status)
	for _, path := range []string{"/v1/lists", "/v1/subscribers", "/v1/suppressions", "/v1/campaigns", "/v1/webhook-endpoints"} {
		res := e.do(e.keyA, "GET", path+"?limit=50&cursor=", nil)
		require.Equal(t, http.StatusOK, res.Status, "%s: %s", path, res.Body)
	}
}

// TestSubscriberLists: a subscriber's lists by name, with how it is in each
// (subscribed, unsubscribed); none is an empty array; another account's
// subscriber, or a bad id, is refused.
func TestSubscriberLists(t *testing.T) {
	t.Parallel()
	e := setup(t)
	sub := decodeAs[api.Subscriber](t, e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "ada@example.com"}))
	other := decodeAs[api.Subscriber](t, e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "bob@example.com"}))
	res := e.do(e.keyA, "GET", "/v1/subscribers/"+itoa(sub.Id)+"/lists", nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.NotNil(t, decodeAs[api.SubscriberMemberships](t, res).Data, "no list is an empty array, not null")
	require.Empty(t, decodeAs[api.SubscriberMemberships](t, res).Data)

	var lists []api.List
	for _, name := range []string{"zebra", "Alpha", "middle"} {
		lists = append(lists, decodeAs[api.List](t, e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": name})))
	}
	for _, l := range lists[:2] {
		res = e.do(e.keyA, "POST", "/v1/lists/"+itoa(l.Id)+"/members", map[string]any{"subscriber_ids": []int64{sub.Id}})
		require.Equal(t, http.StatusOK, res.Status)
	}
	res = e.do(e.keyA, "POST", "/v1/lists/"+itoa(lists[2].Id)+"/members", map[string]any{"subscriber_ids": []int64{other.Id}})
	require.Equal(t, http.StatusOK, res.Status)
	_, err := e.pool.Exec(t.Context(), `UPDATE list_members SET status = 'unsubscribed' WHERE list_id = $1`, lists[0].Id)
	require.NoError(t, err)

	got := decodeAs[api.SubscriberMemberships](t, e.do(e.keyA, "GET", "/v1/subscribers/"+itoa(sub.Id)+"/lists", nil)).Data
	require.Len(t, got, 2, "only its own memberships")
	require.Equal(t, []string{"Alpha", "zebra"}, []string{got[0].Name, got[1].Name}, "by name, in any case")
	require.Equal(t, lists[1].Id, got[0].ListId)
	require.Equal(t, api.SubscriberMembershipStatus("subscribed"), got[0].Status)
	require.Equal(t, api.SubscriberMembershipStatus("unsubscribed"), got[1].Status)

	res = e.do(e.keyB, "GET", "/v1/subscribers/"+itoa(sub.Id)+"/lists", nil)
	require.Equal(t, http.StatusNotFound, res.Status, "another account's subscriber")
	res = e.do(e.keyA, "GET", "/v1/subscribers/987654321/lists", nil)
	require.Equal(t, http.StatusNotFound, res.Status)
	res = e.do(e.keyA, "GET", "/v1/subscribers/x/lists", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/id"}, decodeAs[problem](t, res).pointers())
}
