package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// GET /v1/subscribers?list_id= lists the list's subscribed members only: who left
// it or has not confirmed it is not a member; ?membership= asks for those.
func TestSubscribersOfListByMembership(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "news"})
	require.Equal(t, http.StatusCreated, res.Status)
	l := decodeAs[api.List](t, res)
	ids := map[string]int64{}
	for _, name := range []string{"in", "left", "waiting"} {
		res = e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": name + "@example.com", "status": "confirmed"})
		require.Equal(t, http.StatusCreated, res.Status)
		ids[name] = decodeAs[api.Subscriber](t, res).Id
	}
	res = e.do(e.keyA, "POST", "/v1/lists/"+itoa(l.Id)+"/members",
		map[string]any{"subscriber_ids": []int64{ids["in"], ids["left"], ids["waiting"]}})
	require.Equal(t, http.StatusOK, res.Status)
	_, err := e.pool.Exec(context.Background(), `UPDATE list_members SET status = CASE subscriber_id
		WHEN $1 THEN 'unsubscribed' WHEN $2 THEN 'pending' ELSE status END`, ids["left"], ids["waiting"])
	require.NoError(t, err)
	emails := func(query string) []string {
		res := e.do(e.keyA, "GET", "/v1/subscribers?list_id="+itoa(l.Id)+query, nil)
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
		var out []string
		for _, s := range decodeAs[api.SubscriberPage](t, res).Data {
			out = append(out, s.Email)
		}
		return out
	}
	require.Equal(t, []string{"in@example.com"}, emails(""))
	require.Equal(t, []string{"in@example.com"}, emails("&membership=subscribed"))
	require.Equal(t, []string{"left@example.com"}, emails("&membership=unsubscribed"))
	require.Equal(t, []string{"waiting@example.com"}, emails("&membership=pending"))
	require.Equal(t, []string{"in@example.com", "left@example.com", "waiting@example.com"}, emails("&membership=any"))
	res = e.do(e.keyA, "GET", "/v1/subscribers?list_id="+itoa(l.Id)+"&membership=gone", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, int64(1), decodeAs[api.List](t, e.do(e.keyA, "GET", "/v1/lists/"+itoa(l.Id), nil)).MemberCount)
}
