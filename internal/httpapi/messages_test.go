package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

func receipt(extra map[string]any) map[string]any {
	m := map[string]any{"to": "ada@example.com", "to_name": "Ada", "from": "shop@example.com",
		"subject": "Receipt {{.Attributes.order}}", "text": "Hi {{.Name}}, order {{.Attributes.order}}",
		"data": map[string]any{"order": "A-1"}, "tags": []string{"receipt"}}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// The Idempotency-Key names the message: the same key and body answer with the same
// message (however old: no 24-hour window, the message row is the record), another
// body is 422, and without a key nothing is sent.
func TestMessageKeyedExactlyOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/messages", receipt(nil), "Idempotency-Key", "order-A-1")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	first := decodeAs[api.Message](t, res)
	require.Equal(t, api.SendStatus("queued"), first.Status)
	require.Equal(t, api.MessageCategory("transactional"), first.Category)
	require.Empty(t, res.Header.Get("Idempotent-Replayed"))

	// Much later: the 24-hour response store forgot everything; the message did not.
	_, err := e.pool.Exec(context.Background(), "DELETE FROM idempotency_keys")
	require.NoError(t, err)
	_, err = e.pool.Exec(context.Background(), "UPDATE messages SET created_at = now() - interval '400 days'")
	require.NoError(t, err)
	res = e.do(e.keyA, "POST", "/v1/messages", receipt(nil), "Idempotency-Key", `"order-A-1"`)
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	require.Equal(t, first.Id, decodeAs[api.Message](t, res).Id)
	require.Equal(t, "true", res.Header.Get("Idempotent-Replayed"))

	res = e.do(e.keyA, "POST", "/v1/messages", receipt(map[string]any{"to": "bob@example.com"}), "Idempotency-Key", "order-A-1")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Equal(t, []string{"/Idempotency-Key"}, decodeAs[problem](t, res).pointers())

	for _, key := range []string{"", strings.Repeat("k", 256), "bad\x01key"} {
		var headers []string
		if key != "" {
			headers = []string{"Idempotency-Key", key}
		}
		res = e.do(e.keyA, "POST", "/v1/messages", receipt(map[string]any{"to": "carol@example.com"}), headers...)
		require.Contains(t, []int{http.StatusBadRequest, http.StatusUnprocessableEntity}, res.Status, "%q: %s", key, res.Body)
	}
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT count(*) FROM sends WHERE job_id LIKE 'message:%'").Scan(&n))
	require.Equal(t, 1, n)
}

// Twenty concurrent requests with one key make one message, and all answer with it.
func TestMessageConcurrentSameKey(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	ids := make([]int64, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := e.do(e.keyA, "POST", "/v1/messages", receipt(nil), "Idempotency-Key", "same")
			statuses[i] = res.Status
			if res.Status == http.StatusAccepted {
				ids[i] = decodeAs[api.Message](t, res).Id
			}
		}()
	}
	wg.Wait()
	for i := range 20 {
		require.Equal(t, http.StatusAccepted, statuses[i])
		require.Equal(t, ids[0], ids[i])
	}
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT count(*) FROM messages").Scan(&n))
	require.Equal(t, 1, n)
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT count(*) FROM sends").Scan(&n))
	require.Equal(t, 1, n)
}

// Every field is checked and a refusal stores nothing.
func TestMessageRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/templates", map[string]any{"name": "r", "subject": "s", "text": "{{.Attributes.a.b}}",
		"sample_data": map[string]any{"a": map[string]any{"b": 1}}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	tpl := decodeAs[api.Template](t, res)
	cases := []struct {
		body    map[string]any
		pointer string
	}{
		{receipt(map[string]any{"to": "not an address"}), "/to"},
		{receipt(map[string]any{"to": "a@example.com\r\nBcc: x@example.com"}), "/to"},
		{receipt(map[string]any{"to": nil}), ""},
		{receipt(map[string]any{"from": "Shop <shop@example.com>"}), "/from"},
		{receipt(map[string]any{"reply_to": "x"}), "/reply_to"},
		{receipt(map[string]any{"to_name": "a\r\nBcc: x@example.com"}), "/to_name"},
		{receipt(map[string]any{"from_name": "a\nb"}), "/from_name"},
		{receipt(map[string]any{"category": "bulk"}), ""},
		{receipt(map[string]any{"subject": nil}), "/subject"},
		{receipt(map[string]any{"text": nil}), "/html"},
		{receipt(map[string]any{"template_id": tpl.Id}), "/template_id"},
		{receipt(map[string]any{"template_id": 999999, "subject": nil, "text": nil}), "/template_id"},
		{receipt(map[string]any{"text": "{{.Nope"}), "/text"},
		{receipt(map[string]any{"html": `{{range 100000000}}{{end}}`}), "/html"},
		{receipt(map[string]any{"text": `{{printf "%0999999999d" 1}}`}), "/text"},
		{receipt(map[string]any{"data": map[string]any{"big": strings.Repeat("x", 70<<10)}}), "/data"},
		{receipt(map[string]any{"data": []int{1}}), ""},
		{receipt(map[string]any{"headers": map[string]string{"Bcc": "x@example.com"}}), "/headers/Bcc"},
		{receipt(map[string]any{"headers": map[string]string{"List-Unsubscribe": "<https://x>"}}), "/headers/List-Unsubscribe"},
		{receipt(map[string]any{"headers": map[string]string{"Message-ID": "<x@y>"}}), "/headers/Message-ID"},
		{receipt(map[string]any{"headers": map[string]string{"X-Sendonce-Job": "x"}}), "/headers/X-Sendonce-Job"},
		{receipt(map[string]any{"headers": map[string]string{"X-Ok": "a\r\nBcc: x@example.com"}}), "/headers/X-Ok"},
		{receipt(map[string]any{"headers": map[string]string{"X-Ok": "a", "x-ok": "b"}}), ""},
		{receipt(map[string]any{"tags": []string{"a b"}}), ""},
		{receipt(map[string]any{"tags": []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}}), ""},
		{receipt(map[string]any{"send_at": "tomorrow"}), ""},
		{receipt(map[string]any{"unknown": 1}), ""},
	}
	for i, c := range cases {
		res := e.do(e.keyA, "POST", "/v1/messages", c.body, "Idempotency-Key", "k"+itoa(int64(i)))
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%d %v: %s", i, c.body, res.Body)
		if c.pointer != "" {
			require.Contains(t, decodeAs[problem](t, res).pointers(), c.pointer, "%d: %s", i, res.Body)
		}
	}
	// Template data that the template cannot render with is refused now, not at send.
	res = e.do(e.keyA, "POST", "/v1/messages", receipt(map[string]any{"template_id": tpl.Id, "subject": nil, "text": nil,
		"data": map[string]any{"a": "not an object"}}), "Idempotency-Key", "tpl")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Equal(t, []string{"/text"}, decodeAs[problem](t, res).pointers())

	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT count(*) FROM messages").Scan(&n))
	require.Zero(t, n)
	// A refused key is free: the corrected request may use it.
	res = e.do(e.keyA, "POST", "/v1/messages", receipt(nil), "Idempotency-Key", "k0")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
}

func TestMessageReadAndList(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/templates", map[string]any{"name": "r", "subject": "Order {{.Attributes.order}}",
		"html": "<p>{{.Attributes.order}}</p>"})
	tpl := decodeAs[api.Template](t, res)
	send := func(key string, body map[string]any) api.Message {
		res := e.do(e.keyA, "POST", "/v1/messages", body, "Idempotency-Key", key)
		require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
		return decodeAs[api.Message](t, res)
	}
	a := send("a", receipt(map[string]any{"headers": map[string]string{"X-Order": "A-1", "In-Reply-To": "<x@example.com>"}}))
	b := send("b", receipt(map[string]any{"to": "Bob@Example.com", "tags": []string{"reset"}, "category": "marketing",
		"template_id": tpl.Id, "subject": nil, "text": nil}))
	require.Equal(t, &tpl.Id, b.TemplateId)
	require.Equal(t, "Bob@example.com", b.To)
	require.Equal(t, api.MessageCategory("marketing"), b.Category)

	res = e.do(e.keyA, "GET", "/v1/messages/"+itoa(a.Id), nil)
	require.Equal(t, http.StatusOK, res.Status)
	got := decodeAs[api.Message](t, res)
	require.Equal(t, "a", got.IdempotencyKey)
	require.Equal(t, []string{"receipt"}, got.Tags)
	require.Equal(t, 0, got.Attempts)

	list := func(q string) []int64 {
		res := e.do(e.keyA, "GET", "/v1/messages"+q, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		var ids []int64
		for _, m := range decodeAs[api.MessagePage](t, res).Data {
			ids = append(ids, m.Id)
		}
		return ids
	}
	require.Equal(t, []int64{a.Id, b.Id}, list(""))
	require.Equal(t, []int64{b.Id}, list("?to=bob@EXAMPLE.com"))
	require.Equal(t, []int64{b.Id}, list("?tag=reset"))
	require.Equal(t, []int64{a.Id, b.Id}, list("?status=queued"))
	require.Empty(t, list("?status=sent"))
	res = e.do(e.keyA, "GET", "/v1/messages?limit=1", nil)
	page := decodeAs[api.MessagePage](t, res)
	require.NotNil(t, page.NextCursor)
	require.Equal(t, []int64{b.Id}, list("?limit=1&cursor="+*page.NextCursor))
	res = e.do(e.keyA, "GET", "/v1/messages?status=nope", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)

	// The stream that carries messages is no campaign of the API.
	res = e.do(e.keyA, "GET", "/v1/campaigns", nil)
	require.JSONEq(t, `{"data":[],"next_cursor":null}`, string(res.Body))
	var stream int64
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT id FROM campaigns WHERE kind = 'messages'").Scan(&stream))
	for _, op := range []string{"pause", "cancel", "approve", "unapprove", "resume"} {
		res = e.do(e.keyA, "POST", "/v1/campaigns/"+itoa(stream)+"/"+op, nil)
		require.Equal(t, http.StatusNotFound, res.Status, "%s: %s", op, res.Body)
	}
	for _, p := range []string{"", "/stats", "/sends"} {
		res = e.do(e.keyA, "GET", "/v1/campaigns/"+itoa(stream)+p, nil)
		require.Equal(t, http.StatusNotFound, res.Status, "%s: %s", p, res.Body)
	}
}

// A batch answers each item on its own: one bad item does not stop the others, and
// each item's key behaves as on POST /v1/messages.
func TestMessageBatch(t *testing.T) {
	t.Parallel()
	e := setup(t)
	item := func(key string, body map[string]any) map[string]any {
		return map[string]any{"idempotency_key": key, "message": body}
	}
	res := e.do(e.keyA, "POST", "/v1/messages/batch", map[string]any{"messages": []any{
		item("one", receipt(nil)),
		item("two", receipt(map[string]any{"to": "nope"})),
		item("one", receipt(nil)),
		item("one", receipt(map[string]any{"to": "bob@example.com"})),
		item("three", receipt(map[string]any{"to": "carol@example.com"})),
	}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	out := decodeAs[api.MessageBatchResult](t, res)
	require.Len(t, out.Results, 5)
	require.Equal(t, 202, out.Results[0].Status)
	require.Equal(t, 422, out.Results[1].Status)
	require.Equal(t, "/messages/1/message/to", (*out.Results[1].Problem.Errors)[0].Pointer)
	require.Equal(t, 202, out.Results[2].Status)
	require.Equal(t, out.Results[0].Message.Id, out.Results[2].Message.Id)
	require.Equal(t, 422, out.Results[3].Status)
	require.Equal(t, "/messages/3/idempotency_key", (*out.Results[3].Problem.Errors)[0].Pointer)
	require.Equal(t, 202, out.Results[4].Status)

	many := make([]any, 101)
	for i := range many {
		many[i] = item("k"+itoa(int64(i)), receipt(nil))
	}
	res = e.do(e.keyA, "POST", "/v1/messages/batch", map[string]any{"messages": many})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT count(*) FROM messages").Scan(&n))
	require.Equal(t, 2, n)
}
