package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// A message may name one of its account's own senders: another account's, or an
// unknown one, is 422 naming /sender_id; a From its allowed_from does not permit is
// 422 naming /from; the message shows the sender it named. The sender cannot be
// deleted while such a message is still to be sent; once it is settled the sender
// goes, and the message keeps its history.
func TestMessageSender(t *testing.T) {
	t.Parallel()
	e := setup(t)
	mkSender := func(key string, allowed []string) int64 {
		res := e.do(key, "POST", "/v1/senders", map[string]any{"name": "relay", "type": "http",
			"settings": map[string]any{"url": "https://mail.example.net/send"}, "allowed_from": allowed})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		return int64(decodeAs[map[string]any](t, res)["id"].(float64))
	}
	mine, theirs := mkSender(e.keyA, []string{"example.com"}), mkSender(e.keyB, []string{})

	for _, c := range []struct {
		extra   map[string]any
		pointer string
	}{
		{map[string]any{"sender_id": theirs}, "/sender_id"},
		{map[string]any{"sender_id": 999999}, "/sender_id"},
		{map[string]any{"sender_id": 0}, "/sender_id"},
		{map[string]any{"sender_id": mine, "from": "shop@example.org"}, "/from"},
	} {
		res := e.do(e.keyA, "POST", "/v1/messages", receipt(c.extra), "Idempotency-Key", "refused")
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", c.extra, res.Body)
		require.Equal(t, []string{c.pointer}, decodeAs[problem](t, res).pointers(), "%v", c.extra)
	}
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT count(*) FROM messages").Scan(&n))
	require.Zero(t, n, "nothing stored")

	res := e.do(e.keyA, "POST", "/v1/messages", receipt(map[string]any{"sender_id": mine}), "Idempotency-Key", "via-relay")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	m := decodeAs[api.Message](t, res)
	require.Equal(t, &mine, m.SenderId)
	res = e.do(e.keyA, "POST", "/v1/messages", receipt(nil), "Idempotency-Key", "via-relay")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "another sender is another body: %s", res.Body)
	res = e.do(e.keyA, "POST", "/v1/messages", receipt(nil), "Idempotency-Key", "default")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	require.Nil(t, decodeAs[api.Message](t, res).SenderId)

	// Queued: the sender is in use.
	res = e.do(e.keyA, "DELETE", "/v1/senders/"+itoa(mine), nil)
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
	_, err := e.pool.Exec(context.Background(), `UPDATE sends SET status = 'sent', sent_at = now() WHERE job_id LIKE 'message:%:via-relay'`)
	require.NoError(t, err)
	res = e.do(e.keyA, "DELETE", "/v1/senders/"+itoa(mine), nil)
	require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
	res = e.do(e.keyA, "GET", "/v1/messages/"+itoa(m.Id), nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	got := decodeAs[api.Message](t, res)
	require.Equal(t, api.SendStatus("sent"), got.Status)
	require.Equal(t, &mine, got.SenderId)
	res = e.do(e.keyA, "POST", "/v1/messages", receipt(map[string]any{"sender_id": mine}), "Idempotency-Key", "after")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "a deleted sender is unknown: %s", res.Body)
}

// A double opt-in list's confirmation leaves through the account's default sender:
// a From that sender does not allow is refused when the list is saved (422 naming
// /optin_from_email), not at every public sign-up.
func TestOptinFromCheckedAgainstTheDefaultSender(t *testing.T) {
	t.Parallel()
	e := setup(t)
	list := func(from string) response {
		return e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "news " + from, "optin": "double", "optin_from_email": from})
	}
	require.Equal(t, http.StatusCreated, list("hello@example.org").Status, "no sender: no rule")
	res := e.do(e.keyA, "POST", "/v1/senders", map[string]any{"name": "relay", "type": "http", "default": true,
		"settings": map[string]any{"url": "https://mail.example.net/send"}, "allowed_from": []string{"example.com"}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)

	res = list("hello@example.net")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Equal(t, []string{"/optin_from_email"}, decodeAs[problem](t, res).pointers())
	require.Equal(t, http.StatusCreated, list("hello@example.com").Status)
	// Account B has no sender: its rule is not A's.
	res = e.do(e.keyB, "POST", "/v1/lists", map[string]any{"name": "b", "optin": "double", "optin_from_email": "hello@example.net"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
}
