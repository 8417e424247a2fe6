package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// POST /v1/messages and its batch take a block design (blocks, and layout_id)
// instead of html and text: the stored message is the design rendered in the
// layout, with its brand colours; the key replays it; blocks with html or
// markdown, a bad design and another account's layout are 422s naming the JSON
// pointer, in the batch at the item's place; nothing is stored for them.
func TestMessageBlocks(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "brand",
		"html": `<div class="frame">{{content}}</div>`, "footer": "<p>ACME Ltd</p>", "brand": map[string]any{"primary": "#c2410c"}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	layA := decodeAs[api.Layout](t, res)
	res = e.do(e.keyB, http.MethodPost, "/v1/layouts", map[string]any{"name": "theirs", "html": `<div>{{content}}</div>`})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	layB := decodeAs[api.Layout](t, res)
	design := func(url string) map[string]any {
		return map[string]any{"rows": []any{map[string]any{"columns": []any{map[string]any{"blocks": []any{
			map[string]any{"type": "heading", "text": "Order {{.Attributes.order}}"},
			map[string]any{"type": "button", "text": "Track it", "url": url}}}}}}}
	}

	body := receipt(map[string]any{"text": nil, "blocks": design("https://shop.example/track"), "layout_id": layA.Id})
	res = e.do(e.keyA, http.MethodPost, "/v1/messages", body, "Idempotency-Key", "blk-1")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	m := decodeAs[api.Message](t, res)
	var html, text string
	require.NoError(t, e.pool.QueryRow(t.Context(), `SELECT html, text FROM messages WHERE id = $1`, m.Id).Scan(&html, &text))
	require.Contains(t, html, `<div class="frame"><div style=`)
	require.Contains(t, html, `>Order {{.Attributes.order}}</h1>`)
	require.Contains(t, html, `bgcolor="#c2410c"`, "the layout's primary colour")
	require.Contains(t, html, "<p>ACME Ltd</p></div>")
	require.Contains(t, text, "Track it: https://shop.example/track")

	res = e.do(e.keyA, http.MethodPost, "/v1/messages", body, "Idempotency-Key", "blk-1")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	require.Equal(t, "true", res.Header.Get("Idempotent-Replayed"))
	require.Equal(t, m.Id, decodeAs[api.Message](t, res).Id)
	res = e.do(e.keyA, http.MethodPost, "/v1/messages", receipt(map[string]any{"text": nil, "blocks": design("https://shop.example/other")}), "Idempotency-Key", "blk-1")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "another design under the key: %s", res.Body)

	for _, c := range []struct {
		extra   map[string]any
		pointer string
	}{
		{map[string]any{"blocks": design("https://shop.example/")}, "/blocks"}, // with the text of receipt
		{map[string]any{"text": nil, "markdown": "# Hi", "blocks": design("https://shop.example/")}, "/blocks"},
		{map[string]any{"text": nil, "blocks": design("javascript:alert(1)")}, "/blocks/rows/0/columns/0/blocks/1/url"},
		{map[string]any{"text": nil, "blocks": map[string]any{"rows": []any{}}}, "/blocks/rows"},
		{map[string]any{"text": nil, "blocks": design("https://shop.example/"), "layout_id": layB.Id}, "/layout_id"},
		{map[string]any{"text": nil, "blocks": map[string]any{"rows": []any{map[string]any{"columns": []any{map[string]any{"blocks": []any{
			map[string]any{"type": "text", "text": "Hi {{.Name"}}}}}}}}, "/blocks/rows/0/columns/0/blocks/0/text"},
	} {
		res = e.do(e.keyA, http.MethodPost, "/v1/messages", receipt(c.extra), "Idempotency-Key", "bad-"+c.pointer)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
		require.Equal(t, []string{c.pointer}, decodeAs[problem](t, res).pointers(), "%v", c.extra)
	}

	res = e.do(e.keyA, "POST", "/v1/messages/batch", map[string]any{"messages": []any{
		map[string]any{"idempotency_key": "bb-1", "message": receipt(map[string]any{"text": nil, "blocks": design("https://shop.example/b")})},
		map[string]any{"idempotency_key": "bb-2", "message": receipt(map[string]any{"text": nil, "blocks": design("ftp://x")})},
	}})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	out := decodeAs[api.MessageBatchResult](t, res)
	require.Equal(t, 202, out.Results[0].Status)
	require.Equal(t, 422, out.Results[1].Status)
	require.Equal(t, "/messages/1/message/blocks/rows/0/columns/0/blocks/1/url", (*out.Results[1].Problem.Errors)[0].Pointer)

	var n int
	require.NoError(t, e.pool.QueryRow(t.Context(), `SELECT count(*) FROM messages`).Scan(&n))
	require.Equal(t, 2, n)
}
