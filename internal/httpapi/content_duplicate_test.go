package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestDuplicateComposedContent: a copy of a Markdown or block campaign (sent,
// its content pinned) is a draft with the same content type, source and layout,
// composed in the layout as it is now; a copy of a Markdown template carries the
// same. Editing the layout then recomposes the copies, not the sent original.
func TestDuplicateComposedContent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "brand", "html": `<main>{{content}}</main>`})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	lay := decodeAs[api.Layout](t, res)
	design := map[string]any{"rows": []any{map[string]any{"columns": []any{map[string]any{"blocks": []any{
		map[string]any{"type": "heading", "text": "Hello {{.Name}}"}}}}}}}

	for _, body := range []map[string]any{
		{"name": "md", "content_type": "markdown", "markdown": "Hi *{{.Name}}*"},
		{"name": "blk", "content_type": "blocks", "blocks": design},
	} {
		body["subject"], body["from_email"], body["layout_id"] = "S", "a@example.com", lay.Id
		res = e.do(e.keyA, http.MethodPost, "/v1/campaigns", body)
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
		c := decodeAs[api.Campaign](t, res)
		_, err := e.pool.Exec(t.Context(), `UPDATE campaigns SET status = 'sent', finished_at = now() WHERE id = $1`, c.Id)
		require.NoError(t, err)

		res = e.do(e.keyA, http.MethodPost, "/v1/campaigns/"+itoa(c.Id)+"/duplicate", nil)
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
		d := decodeAs[api.Campaign](t, res)
		require.Equal(t, c.ContentType, d.ContentType)
		require.Equal(t, c.Markdown, d.Markdown)
		if c.Blocks != nil {
			require.NotNil(t, d.Blocks)
			require.JSONEq(t, string(*c.Blocks), string(*d.Blocks))
		} else {
			require.Nil(t, d.Blocks)
		}
		require.NotNil(t, d.LayoutId)
		require.Equal(t, lay.Id, *d.LayoutId)
		require.Equal(t, c.HtmlTemplate, d.HtmlTemplate)

		// The copy is a draft in the layout: editing the layout recomposes it,
		// never the sent original.
		res = e.do(e.keyA, http.MethodPatch, "/v1/layouts/"+itoa(lay.Id), map[string]any{"html": `<section>{{content}}</section>`})
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
		res = e.do(e.keyA, http.MethodGet, "/v1/campaigns/"+itoa(d.Id), nil)
		require.Contains(t, decodeAs[api.Campaign](t, res).HtmlTemplate, "<section>")
		res = e.do(e.keyA, http.MethodGet, "/v1/campaigns/"+itoa(c.Id), nil)
		require.Equal(t, c.HtmlTemplate, decodeAs[api.Campaign](t, res).HtmlTemplate)

		// A copy of the sent original now composes in the layout as it is.
		res = e.do(e.keyA, http.MethodPost, "/v1/campaigns/"+itoa(c.Id)+"/duplicate", nil)
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
		require.Contains(t, decodeAs[api.Campaign](t, res).HtmlTemplate, "<section>")
		res = e.do(e.keyA, http.MethodPatch, "/v1/layouts/"+itoa(lay.Id), map[string]any{"html": `<main>{{content}}</main>`})
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	}

	res = e.do(e.keyA, http.MethodPost, "/v1/templates", map[string]any{"name": "t", "subject": "S",
		"content_type": "markdown", "markdown": "Yo {{.Name}}", "layout_id": lay.Id})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	res = e.do(e.keyA, http.MethodPost, "/v1/templates/"+itoa(tpl.Id)+"/duplicate", nil)
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	cp := decodeAs[api.Template](t, res)
	require.Equal(t, tpl.ContentType, cp.ContentType)
	require.Equal(t, tpl.Markdown, cp.Markdown)
	require.Equal(t, lay.Id, *cp.LayoutId)
	require.Equal(t, tpl.Html, cp.Html)
}
