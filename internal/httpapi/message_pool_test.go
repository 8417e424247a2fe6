package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// A message may name one of its account's sender pools instead of a sender, by
// the campaigns' rule: both is 422 naming /pool_id, as is another account's pool
// or an unknown one; a From a sender of the pool does not allow is 422 naming
// /from; nothing is stored. The message (single or in a batch) shows the pool it
// named; the pool cannot be deleted while such a message is still to be sent,
// and goes once it is settled, the message keeping its history.
func TestMessagePool(t *testing.T) {
	t.Parallel()
	e := setup(t)
	mkSender := func(key, name string, allowed []string) int64 {
		res := e.do(key, "POST", "/v1/senders", map[string]any{"name": name, "type": "http",
			"settings": map[string]any{"url": "https://mail.example.net/" + name}, "allowed_from": allowed})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		return decodeAs[api.Sender](t, res).Id
	}
	mkPool := func(key string, senders ...int64) int64 {
		res := e.do(key, "POST", "/v1/sender-pools", map[string]any{"name": "relays", "senders": senders})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		return decodeAs[api.SenderPool](t, res).Id
	}
	one, two := mkSender(e.keyA, "one", []string{}), mkSender(e.keyA, "two", []string{"example.com"})
	mine, theirs := mkPool(e.keyA, one, two), mkPool(e.keyB, mkSender(e.keyB, "theirs", []string{}))

	for _, c := range []struct {
		extra   map[string]any
		pointer string
	}{
		{map[string]any{"pool_id": mine, "sender_id": one}, "/pool_id"},
		{map[string]any{"pool_id": theirs}, "/pool_id"},
		{map[string]any{"pool_id": 999999}, "/pool_id"},
		{map[string]any{"pool_id": mine, "from": "shop@example.org"}, "/from"},
	} {
		res := e.do(e.keyA, "POST", "/v1/messages", receipt(c.extra), "Idempotency-Key", "refused")
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", c.extra, res.Body)
		require.Equal(t, []string{c.pointer}, decodeAs[problem](t, res).pointers(), "%v", c.extra)
	}
	res := e.do(e.keyA, "POST", "/v1/messages/batch", map[string]any{"messages": []map[string]any{
		{"idempotency_key": "batch-theirs", "message": receipt(map[string]any{"pool_id": theirs})}}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Contains(t, string(res.Body), "/pool_id")
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT count(*) FROM messages").Scan(&n))
	require.Zero(t, n, "nothing stored")

	res = e.do(e.keyA, "POST", "/v1/messages", receipt(map[string]any{"pool_id": mine}), "Idempotency-Key", "via-pool")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	m := decodeAs[api.Message](t, res)
	require.Equal(t, &mine, m.PoolId)
	require.Nil(t, m.SenderId)
	res = e.do(e.keyA, "POST", "/v1/messages", receipt(nil), "Idempotency-Key", "via-pool")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "without the pool is another body: %s", res.Body)
	res = e.do(e.keyA, "POST", "/v1/messages", receipt(nil), "Idempotency-Key", "default")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	require.Nil(t, decodeAs[api.Message](t, res).PoolId)
	res = e.do(e.keyA, "POST", "/v1/messages/batch", map[string]any{"messages": []map[string]any{
		{"idempotency_key": "batch-pool", "message": receipt(map[string]any{"pool_id": mine, "to": "bob@example.com"})}}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var streams int
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(DISTINCT campaign_id) FROM sends
		WHERE job_id LIKE 'message:%' AND campaign_id IN (SELECT id FROM campaigns WHERE pool_id = $1 AND kind = 'messages')`,
		mine).Scan(&streams))
	require.Equal(t, 1, streams, "the pool's messages share its one stream")

	// Queued: the pool is in use.
	res = e.do(e.keyA, "DELETE", "/v1/sender-pools/"+itoa(mine), nil)
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
	_, err := e.pool.Exec(context.Background(), `UPDATE sends SET status = 'sent', sent_at = now()
		WHERE job_id LIKE 'message:%:via-pool' OR job_id LIKE 'message:%:batch-pool'`)
	require.NoError(t, err)
	res = e.do(e.keyA, "DELETE", "/v1/sender-pools/"+itoa(mine), nil)
	require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
	res = e.do(e.keyA, "GET", "/v1/messages/"+itoa(m.Id), nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	got := decodeAs[api.Message](t, res)
	require.Equal(t, api.SendStatus("sent"), got.Status)
	require.Equal(t, &mine, got.PoolId)
}

// A sequence's send step may name a sender pool instead of a sender, by the same
// rule (both, or another account's pool, is 422 naming /steps/N/pool_id, nothing
// stored); its step campaign then goes through the pool and names no sender.
func TestSequenceStepPool(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	mkSender := func(key, name string) int64 {
		res := e.do(key, "POST", "/v1/senders", map[string]any{"name": name, "type": "http",
			"settings": map[string]any{"url": "https://mail.example.net/" + name}})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		return decodeAs[api.Sender](t, res).Id
	}
	mkPool := func(key string, senders ...int64) int64 {
		res := e.do(key, "POST", "/v1/sender-pools", map[string]any{"name": "relays", "senders": senders})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		return decodeAs[api.SenderPool](t, res).Id
	}
	one := mkSender(e.keyA, "one")
	res := e.do(e.keyA, "POST", "/v1/senders", map[string]any{"name": "default", "type": "http", "default": true,
		"settings": map[string]any{"url": "https://mail.example.net/default"}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body) // not the step's: the pool is
	mine, theirs := mkPool(e.keyA, one), mkPool(e.keyB, mkSender(e.keyB, "theirs"))
	res = e.do(e.keyA, "POST", "/v1/templates", map[string]any{"name": "w", "subject": "Welcome", "text": "Hi"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	tpl := decodeAs[api.Template](t, res).Id
	body := func(extra map[string]any) map[string]any {
		st := map[string]any{"type": "send", "template_id": tpl, "from_email": "hello@example.com"}
		for k, v := range extra {
			st[k] = v
		}
		return map[string]any{"name": "welcome", "trigger": map[string]any{"type": "manual"},
			"steps": []any{map[string]any{"type": "wait", "duration": "1h"}, st}}
	}
	for _, extra := range []map[string]any{{"pool_id": mine, "sender_id": one}, {"pool_id": theirs}, {"pool_id": 999999}} {
		res := e.do(e.keyA, "POST", "/v1/sequences", body(extra))
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", extra, res.Body)
		require.Equal(t, []string{"/steps/1/pool_id"}, decodeAs[problem](t, res).pointers(), "%v", extra)
	}
	res = e.do(e.keyA, "POST", "/v1/sequences", body(map[string]any{"pool_id": mine}))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	seq := decodeAs[api.Sequence](t, res)
	require.Equal(t, &mine, seq.Steps[1].PoolId)
	res = e.do(e.keyA, "POST", "/v1/sequences/"+itoa(seq.Id)+"/activate", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var pool *int64
	var sender *int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT c.pool_id, c.sender_id FROM campaigns c
		JOIN sequence_steps st ON st.campaign_id = c.id WHERE st.sequence_id = $1`, seq.Id).Scan(&pool, &sender))
	require.Equal(t, &mine, pool, "the step campaign goes through the pool")
	require.Nil(t, sender, "and names no sender (not the account's default)")
	res = e.do(e.keyA, "DELETE", "/v1/sender-pools/"+itoa(mine), nil)
	require.Equal(t, http.StatusConflict, res.Status, "a step campaign names it: %s", res.Body)
}
