package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestBlocksContent: a template and a campaign with a block design are rendered
// in the default layout when saved (html and text returned, the design kept); a
// preview of an unsaved design renders it; a bad design is a 422 naming the
// field and changes nothing; switching to HTML drops the design.
func TestBlocksContent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "brand", "default": true,
		"html": `<html><body class="frame">{{content}}</body></html>`, "text": "{{content}}\n-- brand --"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	design := map[string]any{"rows": []any{map[string]any{"columns": []any{map[string]any{"blocks": []any{
		map[string]any{"type": "heading", "text": "Hello {{.Name}}"},
		map[string]any{"type": "button", "text": "Shop", "url": "https://shop.example/"},
		map[string]any{"type": "footer", "text": "Example Ltd"},
	}}}}}}
	res = e.do(e.keyA, http.MethodPost, "/v1/templates", map[string]any{"name": "news", "subject": "News",
		"content_type": "blocks", "blocks": design})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	require.Equal(t, api.TemplateContentType("blocks"), tpl.ContentType)
	require.NotNil(t, tpl.Blocks)
	require.Contains(t, string(*tpl.Blocks), `"Hello {{.Name}}"`)
	require.Contains(t, tpl.Html, `<body class="frame"><div style=`)
	require.Contains(t, tpl.Html, `>Hello {{.Name}}</h1>`)
	require.Contains(t, tpl.Text, "Shop: https://shop.example/")
	require.Contains(t, tpl.Text, "-- brand --")

	res = e.do(e.keyA, http.MethodPost, "/v1/templates/preview", map[string]any{"subject": "S", "content_type": "blocks", "blocks": design, "name": "Ann"})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Contains(t, decodeAs[api.Rendered](t, res).Html, `>Hello Ann</h1>`)

	bad := map[string]any{"rows": []any{map[string]any{"columns": []any{map[string]any{"blocks": []any{
		map[string]any{"type": "heading", "text": "Hi"},
		map[string]any{"type": "button", "text": "Go", "url": "javascript:alert(1)"},
	}}}}}}
	for _, req := range []struct{ method, path string }{{http.MethodPatch, "/v1/templates/" + itoa(tpl.Id)}, {http.MethodPost, "/v1/templates/preview"}} {
		res = e.do(e.keyA, req.method, req.path, map[string]any{"subject": "S", "content_type": "blocks", "blocks": bad})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
		require.Equal(t, []string{"/blocks/rows/0/columns/0/blocks/1/url"}, problemPointers(t, res.Body))
	}
	res = e.do(e.keyA, http.MethodGet, "/v1/templates/"+itoa(tpl.Id), nil)
	require.Equal(t, tpl.Html, decodeAs[api.Template](t, res).Html, "a refused change changed nothing")
	for ptr, body := range map[string]map[string]any{
		"/blocks": {"name": "x1", "subject": "S", "content_type": "blocks"},
		"/html":   {"name": "x2", "subject": "S", "content_type": "blocks", "blocks": design, "html": "<p>x</p>"},
		"/blocks/rows/0/columns/0/blocks/0/alt": {"name": "x3", "subject": "S", "content_type": "blocks", "blocks": map[string]any{"rows": []any{
			map[string]any{"columns": []any{map[string]any{"blocks": []any{map[string]any{"type": "image", "src": "https://x.example/a.png"}}}}}}}},
	} {
		res = e.do(e.keyA, http.MethodPost, "/v1/templates", body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
		require.Equal(t, []string{ptr}, problemPointers(t, res.Body), string(res.Body))
	}
	res = e.do(e.keyA, http.MethodPost, "/v1/campaigns", map[string]any{"name": "c", "subject": "Hi", "from_email": "news@example.com",
		"content_type": "blocks", "blocks": design})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	c := decodeAs[api.Campaign](t, res)
	require.NotNil(t, c.Blocks)
	require.Contains(t, c.HtmlTemplate, `>Hello {{.Name}}</h1>`)
	res = e.do(e.keyA, http.MethodPatch, "/v1/campaigns/"+itoa(c.Id), map[string]any{"blocks": bad})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Equal(t, []string{"/blocks/rows/0/columns/0/blocks/1/url"}, problemPointers(t, res.Body))
	res = e.do(e.keyA, http.MethodPatch, "/v1/campaigns/"+itoa(c.Id), map[string]any{"content_type": "html", "html_template": "<p>typed</p>"})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	c = decodeAs[api.Campaign](t, res)
	require.Nil(t, c.Blocks)
	require.Equal(t, "<p>typed</p>", c.HtmlTemplate)
}
