package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// POST /v1/messages and its batch take markdown (and layout_id) instead of html
// and text: the stored message is the Markdown converted and framed in the layout;
// the key replays it; markdown with html, another account's layout and a broken
// action are 422s naming the field, in the batch at the item's place.
func TestMessageMarkdown(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "brand",
		"html": `<html><body><div class="frame">{{content}}</div></body></html>`, "text": "BRAND\n{{content}}"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	layA := decodeAs[api.Layout](t, res)
	res = e.do(e.keyB, http.MethodPost, "/v1/layouts", map[string]any{"name": "theirs", "html": `<div>{{content}}</div>`})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	layB := decodeAs[api.Layout](t, res)

	body := receipt(map[string]any{"text": nil, "markdown": "# Order {{.Attributes.order}}\n\nHi *{{.Name}}*", "layout_id": layA.Id})
	res = e.do(e.keyA, http.MethodPost, "/v1/messages", body, "Idempotency-Key", "md-1")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	m := decodeAs[api.Message](t, res)
	var html, text string
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT html, text FROM messages WHERE id = $1`, m.Id).Scan(&html, &text))
	require.Contains(t, html, `<div class="frame"><h1>Order {{.Attributes.order}}</h1>`)
	require.Contains(t, html, "<em>{{.Name}}</em>")
	require.Contains(t, text, "BRAND\n")
	require.Contains(t, text, "Order {{.Attributes.order}}")

	res = e.do(e.keyA, http.MethodPost, "/v1/messages", body, "Idempotency-Key", "md-1")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	require.Equal(t, "true", res.Header.Get("Idempotent-Replayed"))
	require.Equal(t, m.Id, decodeAs[api.Message](t, res).Id)
	res = e.do(e.keyA, http.MethodPost, "/v1/messages", receipt(map[string]any{"text": nil, "markdown": "# Other"}), "Idempotency-Key", "md-1")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Equal(t, []string{"/Idempotency-Key"}, decodeAs[problem](t, res).pointers())

	for _, c := range []struct {
		extra   map[string]any
		pointer string
	}{
		{map[string]any{"markdown": "# Hi", "html": "<p>x</p>"}, "/markdown"},
		{map[string]any{"text": nil, "markdown": "# Hi", "layout_id": layB.Id}, "/layout_id"},
		{map[string]any{"text": nil, "markdown": "Hi {{.Name"}, "/markdown"},
	} {
		res = e.do(e.keyA, http.MethodPost, "/v1/messages", receipt(c.extra), "Idempotency-Key", "bad-"+c.pointer)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
		require.Equal(t, []string{c.pointer}, decodeAs[problem](t, res).pointers(), "%v", c.extra)
	}

	res = e.do(e.keyA, "POST", "/v1/messages/batch", map[string]any{"messages": []any{
		map[string]any{"idempotency_key": "b-1", "message": receipt(map[string]any{"text": nil, "markdown": "**bold**"})},
		map[string]any{"idempotency_key": "b-2", "message": receipt(map[string]any{"markdown": "x"})},
	}})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	out := decodeAs[api.MessageBatchResult](t, res)
	require.Equal(t, 202, out.Results[0].Status)
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT html FROM messages WHERE id = $1`, out.Results[0].Message.Id).Scan(&html))
	require.Contains(t, html, "<strong>bold</strong>")
	require.Equal(t, 422, out.Results[1].Status)
	require.Equal(t, "/messages/1/message/markdown", (*out.Results[1].Problem.Errors)[0].Pointer)

	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM messages`).Scan(&n))
	require.Equal(t, 2, n)
}
