package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

func TestSubscriberCRUD(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "Ada@Example.COM", "name": "Ada",
		"attributes": map[string]any{"plan": "pro"}, "status": "confirmed"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	sub := decodeAs[api.Subscriber](t, res)
	require.Equal(t, "Ada@example.com", sub.Email)
	require.Equal(t, api.SubscriberStatus("confirmed"), sub.Status)
	require.Equal(t, "pro", sub.Attributes["plan"])

	res = e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "ada@EXAMPLE.com"})
	require.Equal(t, http.StatusConflict, res.Status)

	res = e.do(e.keyA, "GET", "/v1/subscribers/"+itoa(sub.Id), nil)
	require.Equal(t, http.StatusOK, res.Status)

	res = e.do(e.keyA, "PATCH", "/v1/subscribers/"+itoa(sub.Id), map[string]any{"name": "Ada L."})
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, "Ada L.", decodeAs[api.Subscriber](t, res).Name)

	res = e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "bob@example.com"})
	require.Equal(t, http.StatusCreated, res.Status)
	bob := decodeAs[api.Subscriber](t, res)
	require.Equal(t, api.SubscriberStatus("pending"), bob.Status)
	res = e.do(e.keyA, "POST", "/v1/subscribers/"+itoa(bob.Id)+"/confirm", nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, api.SubscriberStatus("confirmed"), decodeAs[api.Subscriber](t, res).Status)

	res = e.do(e.keyA, "GET", "/v1/subscribers?limit=1", nil)
	require.Equal(t, http.StatusOK, res.Status)
	page := decodeAs[api.SubscriberPage](t, res)
	require.Len(t, page.Data, 1)
	require.NotNil(t, page.NextCursor)
	res = e.do(e.keyA, "GET", "/v1/subscribers?limit=1&cursor="+*page.NextCursor, nil)
	page2 := decodeAs[api.SubscriberPage](t, res)
	require.Len(t, page2.Data, 1)
	require.Equal(t, bob.Id, page2.Data[0].Id)
	require.Nil(t, page2.NextCursor)

	res = e.do(e.keyA, "GET", "/v1/subscribers?email=BOB", nil)
	require.Len(t, decodeAs[api.SubscriberPage](t, res).Data, 1)

	res = e.do(e.keyA, "DELETE", "/v1/subscribers/"+itoa(sub.Id), nil)
	require.Equal(t, http.StatusNoContent, res.Status)
	res = e.do(e.keyA, "GET", "/v1/subscribers/"+itoa(sub.Id), nil)
	require.Equal(t, http.StatusNotFound, res.Status)
}

func TestSubscriberValidation(t *testing.T) {
	t.Parallel()
	e := setup(t)
	cases := []struct {
		name    string
		body    any
		pointer string
	}{
		{"missing email", map[string]any{"name": "x"}, "/email"},
		{"wrong type", map[string]any{"email": 5}, "/email"},
		{"unknown field", map[string]any{"email": "a@example.com", "nope": 1}, "/nope"},
		{"bad status", map[string]any{"email": "a@example.com", "status": "unsubscribed"}, "/status"},
		{"display name", map[string]any{"email": "Ada <a@example.com>"}, "/email"},
		{"attributes not an object", map[string]any{"email": "a@example.com", "attributes": []int{1}}, "/attributes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := e.do(e.keyA, "POST", "/v1/subscribers", c.body)
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
			require.Contains(t, decodeAs[problem](t, res).pointers(), c.pointer, "%s", res.Body)
		})
	}
	res := e.do(e.keyA, "GET", "/v1/subscribers?cursor=garbage", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/cursor"}, decodeAs[problem](t, res).pointers())
	res = e.do(e.keyA, "GET", "/v1/subscribers?limit=501", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/limit"}, decodeAs[problem](t, res).pointers())
	res = e.do(e.keyA, "GET", "/v1/subscribers/abc", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	res = e.do("", "GET", "/v1/subscribers", nil)
	require.Equal(t, http.StatusUnauthorized, res.Status)
}
