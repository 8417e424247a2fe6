package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestSenderPools: a pool of the account's senders in order, named by a
// campaign instead of a sender; every refusal a 422 naming the field with nothing
// stored; another account's sender or pool cannot be named; a pool or a member
// sender in use cannot be deleted.
func TestSenderPools(t *testing.T) {
	t.Parallel()
	e := setup(t)
	newSender := func(key, name string) int64 {
		res := e.do(key, "POST", "/v1/senders", map[string]any{"name": name, "type": "http",
			"settings": map[string]any{"url": "https://relay.example/" + name}})
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
		return decodeAs[api.Sender](t, res).Id
	}
	one, two := newSender(e.keyA, "one"), newSender(e.keyA, "two")
	theirs := newSender(e.keyB, "theirs")

	for _, c := range []struct {
		body    any
		pointer string
	}{
		{map[string]any{"name": "", "senders": []int64{one}}, "/name"},
		{map[string]any{"name": "p", "senders": []int64{}}, "/senders"},
		{map[string]any{"name": "p", "senders": []int64{one, one}}, "/senders/1"},
		{map[string]any{"name": "p", "senders": []int64{one, theirs}}, "/senders/1"},
		{map[string]any{"name": "p", "senders": []int64{one, 99999999}}, "/senders/1"},
		{map[string]any{"name": "p"}, "/senders"},
	} {
		res := e.do(e.keyA, "POST", "/v1/sender-pools", c.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", c.body, res.Body)
		require.Contains(t, decodeAs[problem](t, res).pointers(), c.pointer, "%v: %s", c.body, res.Body)
	}
	res := e.do(e.keyA, "GET", "/v1/sender-pools", nil)
	require.JSONEq(t, `{"data":[],"next_cursor":null}`, string(res.Body), "a refused pool stores nothing")

	res = e.do(e.keyA, "POST", "/v1/sender-pools", map[string]any{"name": "relays", "senders": []int64{two, one}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	pl := decodeAs[api.SenderPool](t, res)
	require.Equal(t, []int64{two, one}, pl.Senders, "in the order given: the primary first")
	res = e.do(e.keyA, "PATCH", "/v1/sender-pools/"+itoa(pl.Id), map[string]any{"senders": []int64{one, two}})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Equal(t, []int64{one, two}, decodeAs[api.SenderPool](t, res).Senders)
	res = e.do(e.keyA, "PATCH", "/v1/sender-pools/"+itoa(pl.Id), map[string]any{"senders": []int64{theirs}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	res = e.do(e.keyA, "GET", "/v1/sender-pools/"+itoa(pl.Id), nil)
	require.Equal(t, []int64{one, two}, decodeAs[api.SenderPool](t, res).Senders, "a refused update changes nothing")
	res = e.do(e.keyB, "GET", "/v1/sender-pools/"+itoa(pl.Id), nil)
	require.Equal(t, http.StatusNotFound, res.Status)

	// A campaign names the pool, or a sender, not both; B cannot name A's pool.
	body := map[string]any{"name": "c", "subject": "s", "from_email": "news@example.com", "html_template": "<p>x</p>"}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range body {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	res = e.do(e.keyA, "POST", "/v1/campaigns", with(map[string]any{"pool_id": pl.Id, "sender_id": one}))
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Contains(t, decodeAs[problem](t, res).pointers(), "/pool_id")
	res = e.do(e.keyB, "POST", "/v1/campaigns", with(map[string]any{"pool_id": pl.Id}))
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Contains(t, decodeAs[problem](t, res).pointers(), "/pool_id")
	res = e.do(e.keyA, "POST", "/v1/campaigns", with(map[string]any{"pool_id": pl.Id}))
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	camp := decodeAs[api.Campaign](t, res)
	require.NotNil(t, camp.PoolId)
	require.Equal(t, pl.Id, *camp.PoolId)
	require.Nil(t, camp.SenderId)

	// In use: neither the pool nor its senders can go.
	res = e.do(e.keyA, "DELETE", "/v1/sender-pools/"+itoa(pl.Id), nil)
	require.Equal(t, http.StatusConflict, res.Status, string(res.Body))
	res = e.do(e.keyA, "DELETE", "/v1/senders/"+itoa(two), nil)
	require.Equal(t, http.StatusConflict, res.Status, string(res.Body))

	// Naming a sender leaves the pool; then the pool can go.
	res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+itoa(camp.Id), map[string]any{"sender_id": one})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	camp = decodeAs[api.Campaign](t, res)
	require.Nil(t, camp.PoolId)
	require.Equal(t, one, *camp.SenderId)
	res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+itoa(camp.Id), map[string]any{"pool_id": pl.Id})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	camp = decodeAs[api.Campaign](t, res)
	require.Equal(t, pl.Id, *camp.PoolId)
	require.Nil(t, camp.SenderId, "naming a pool leaves the sender")
	res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+itoa(camp.Id), map[string]any{"pool_id": nil})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Nil(t, decodeAs[api.Campaign](t, res).PoolId)
	res = e.do(e.keyA, "DELETE", "/v1/sender-pools/"+itoa(pl.Id), nil)
	require.Equal(t, http.StatusNoContent, res.Status, string(res.Body))
}
