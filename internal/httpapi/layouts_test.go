package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

func problemPointers(t *testing.T, body []byte) []string {
	t.Helper()
	var p struct {
		Errors []struct {
			Pointer string `json:"pointer"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(body, &p), string(body))
	var out []string
	for _, f := range p.Errors {
		out = append(out, f.Pointer)
	}
	return out
}

// TestMarkdownTemplateInLayout: a Markdown template is converted and framed in its
// layout when saved; html and text are what it composes to, actions intact; a
// change of the layout recomposes it; a layout in use cannot be deleted.
func TestMarkdownTemplateInLayout(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "brand",
		"html": `<html><body><div class="frame">{{content}}</div><a href="{{.UnsubscribeURL}}">Unsubscribe</a></body></html>`,
		"text": "{{content}}\n--\nUnsubscribe: {{.UnsubscribeURL}}"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	lay := decodeAs[api.Layout](t, res)

	md := "# Hello {{.Name}}\n\n| Plan | Price |\n|---|---|\n| {{.Attributes.plan | printf \"%q\"}} | 10 |\n"
	res = e.do(e.keyA, http.MethodPost, "/v1/templates", map[string]any{"name": "news", "subject": "News",
		"content_type": "markdown", "markdown": md, "layout_id": lay.Id, "sample_data": map[string]any{"plan": "pro"}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	require.Equal(t, api.TemplateContentTypeMarkdown, tpl.ContentType)
	require.Equal(t, md, tpl.Markdown)
	require.Equal(t, lay.Id, *tpl.LayoutId)
	require.Contains(t, tpl.Html, `<div class="frame"><h1>Hello {{.Name}}</h1>`)
	require.Contains(t, tpl.Html, `<td>{{.Attributes.plan | printf "%q"}}</td>`)
	require.Contains(t, tpl.Text, "Hello {{.Name}}\n=====")
	require.Contains(t, tpl.Text, "--\nUnsubscribe: {{.UnsubscribeURL}}")

	res = e.do(e.keyA, http.MethodPost, "/v1/templates/"+itoa(tpl.Id)+"/render", map[string]any{"name": "Ann"})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	out := decodeAs[api.Rendered](t, res)
	require.Contains(t, out.Html, `<h1>Hello Ann</h1>`)
	require.Contains(t, out.Html, `<td>&#34;pro&#34;</td>`)
	require.Contains(t, out.Text, "\"pro\" | 10")

	// Editing the layout recomposes the template.
	res = e.do(e.keyA, http.MethodPatch, "/v1/layouts/"+itoa(lay.Id), map[string]any{"html": `<main>{{content}}</main>`})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	res = e.do(e.keyA, http.MethodGet, "/v1/templates/"+itoa(tpl.Id), nil)
	require.Contains(t, decodeAs[api.Template](t, res).Html, `<main><h1>Hello {{.Name}}</h1>`)

	// In use: 409, and it stays.
	res = e.do(e.keyA, http.MethodDelete, "/v1/layouts/"+itoa(lay.Id), nil)
	require.Equal(t, http.StatusConflict, res.Status, string(res.Body))
	res = e.do(e.keyA, http.MethodGet, "/v1/layouts/"+itoa(lay.Id), nil)
	require.Equal(t, http.StatusOK, res.Status)
	// Back to HTML content: the layout is free.
	res = e.do(e.keyA, http.MethodPatch, "/v1/templates/"+itoa(tpl.Id), map[string]any{"content_type": "html"})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	res = e.do(e.keyA, http.MethodDelete, "/v1/layouts/"+itoa(lay.Id), nil)
	require.Equal(t, http.StatusNoContent, res.Status, string(res.Body))
}

// TestDefaultLayout: Markdown that names no layout is framed in the account's
// default; changing or unsetting the default recomposes it; the default cannot be
// deleted.
func TestDefaultLayout(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, http.MethodPost, "/v1/templates", map[string]any{"name": "n", "subject": "S",
		"content_type": "markdown", "markdown": "Hi *{{.Name}}*"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	require.Equal(t, "<p>Hi <em>{{.Name}}</em></p>\n", tpl.Html)
	require.Nil(t, tpl.LayoutId)

	res = e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "d", "html": "<div>{{content}}</div>", "default": true})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	lay := decodeAs[api.Layout](t, res)
	require.True(t, lay.Default)
	get := func() string {
		r := e.do(e.keyA, http.MethodGet, "/v1/templates/"+itoa(tpl.Id), nil)
		return decodeAs[api.Template](t, r).Html
	}
	require.Equal(t, "<div><p>Hi <em>{{.Name}}</em></p>\n</div>", get())

	res = e.do(e.keyA, http.MethodDelete, "/v1/layouts/"+itoa(lay.Id), nil)
	require.Equal(t, http.StatusConflict, res.Status, string(res.Body))

	// A second default replaces the first.
	res = e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "d2", "html": "<section>{{content}}</section>", "default": true})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	lay2 := decodeAs[api.Layout](t, res)
	require.Equal(t, "<section><p>Hi <em>{{.Name}}</em></p>\n</section>", get())
	res = e.do(e.keyA, http.MethodGet, "/v1/layouts/"+itoa(lay.Id), nil)
	require.False(t, decodeAs[api.Layout](t, res).Default)

	res = e.do(e.keyA, http.MethodPatch, "/v1/layouts/"+itoa(lay2.Id), map[string]any{"default": false})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Equal(t, "<p>Hi <em>{{.Name}}</em></p>\n", get())

	// The unsaved preview composes the same way.
	res = e.do(e.keyA, http.MethodPost, "/v1/templates/preview", map[string]any{"subject": "S",
		"content_type": "markdown", "markdown": "**{{.Name}}**", "layout_id": lay.Id})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Equal(t, "<div><p><strong>Sample Subscriber</strong></p>\n</div>", decodeAs[api.Rendered](t, res).Html)
}

// TestLayoutBadInput: bad layouts and bad Markdown content are 422 naming the field,
// and nothing is stored or changed; another account's layout is not found (404 on
// its routes, 422 naming layout_id when content names it).
func TestLayoutBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "a", "html": "<div>{{content}}</div>"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	layA := decodeAs[api.Layout](t, res)
	res = e.do(e.keyA, http.MethodPost, "/v1/templates", map[string]any{"name": "t", "subject": "S",
		"content_type": "markdown", "markdown": "x", "layout_id": layA.Id})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tplA := decodeAs[api.Template](t, res)

	count := func(table string) int {
		var n int
		require.NoError(t, e.pool.QueryRow(t.Context(), `SELECT count(*) FROM `+table).Scan(&n))
		return n
	}
	layouts, templates := count("layouts"), count("templates")
	for _, c := range []struct {
		key, method, path string
		body              map[string]any
		pointer           string
	}{
		{e.keyA, "POST", "/v1/layouts", map[string]any{"name": "b", "html": "<div>no token</div>"}, "/html"},
		{e.keyA, "POST", "/v1/layouts", map[string]any{"name": "b", "html": "{{content}}{{content}}"}, "/html"},
		{e.keyA, "POST", "/v1/layouts", map[string]any{"name": "b", "html": "{{content}}", "text": "no token"}, "/text"},
		{e.keyA, "POST", "/v1/layouts", map[string]any{"name": "b", "html": "{{content}}{{.Nope"}, "/html"},
		{e.keyA, "POST", "/v1/layouts", map[string]any{"name": " ", "html": "{{content}}"}, "/name"},
		{e.keyA, "PATCH", "/v1/layouts/" + itoa(layA.Id), map[string]any{"html": "<div></div>"}, "/html"},
		{e.keyA, "POST", "/v1/templates", map[string]any{"name": "u", "subject": "S", "content_type": "markdown", "markdown": "x", "layout_id": 999999}, "/layout_id"},
		{e.keyB, "POST", "/v1/templates", map[string]any{"name": "u", "subject": "S", "content_type": "markdown", "markdown": "x", "layout_id": layA.Id}, "/layout_id"},
		{e.keyB, "POST", "/v1/templates/preview", map[string]any{"subject": "S", "content_type": "markdown", "markdown": "x", "layout_id": layA.Id}, "/layout_id"},
		{e.keyA, "POST", "/v1/templates", map[string]any{"name": "u", "subject": "S", "content_type": "markdown", "markdown": "x", "html": "<p>x</p>"}, "/html"},
		{e.keyA, "POST", "/v1/templates", map[string]any{"name": "u", "subject": "S", "content_type": "markdown", "markdown": " "}, "/markdown"},
		{e.keyA, "POST", "/v1/templates", map[string]any{"name": "u", "subject": "S", "content_type": "markdown", "markdown": "Hi {{.Name"}, "/markdown"},
		{e.keyA, "POST", "/v1/templates", map[string]any{"name": "u", "subject": "S", "content_type": "markdown", "markdown": "Hi {{env \"HOME\"}}"}, "/markdown"},
		{e.keyA, "POST", "/v1/templates", map[string]any{"name": "u", "subject": "S", "content_type": "rtf", "text": "x"}, "/content_type"},
		{e.keyA, "POST", "/v1/templates", map[string]any{"name": "u", "subject": "S", "text": "x", "layout_id": layA.Id}, "/layout_id"},
		{e.keyA, "PATCH", "/v1/templates/" + itoa(tplA.Id), map[string]any{"layout_id": 999999}, "/layout_id"},
		{e.keyA, "PATCH", "/v1/templates/" + itoa(tplA.Id), map[string]any{"text": "hand-written"}, "/html"},
	} {
		res := e.do(c.key, c.method, c.path, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s %s %v: %s", c.method, c.path, c.body, res.Body)
		require.Contains(t, problemPointers(t, res.Body), c.pointer, "%v: %s", c.body, res.Body)
	}
	require.Equal(t, layouts, count("layouts"))
	require.Equal(t, templates, count("templates"))
	res = e.do(e.keyA, http.MethodGet, "/v1/templates/"+itoa(tplA.Id), nil)
	got := decodeAs[api.Template](t, res)
	require.Equal(t, "<div><p>x</p>\n</div>", got.Html)
	require.Equal(t, layA.Id, *got.LayoutId)
	res = e.do(e.keyB, http.MethodGet, "/v1/layouts/"+itoa(layA.Id), nil)
	require.Equal(t, http.StatusNotFound, res.Status)
}

// TestClearLayout: PATCH with layout_id null takes a template's or a draft
// campaign's layout away: the Markdown is framed in the account's default
// layout again, and the layout it named is free to delete.
func TestClearLayout(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "d", "html": "<div>{{content}}</div>", "default": true})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	res = e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "own", "html": "<main>{{content}}</main>"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	own := decodeAs[api.Layout](t, res)

	res = e.do(e.keyA, http.MethodPost, "/v1/templates", map[string]any{"name": "n", "subject": "S",
		"content_type": "markdown", "markdown": "Hi", "layout_id": own.Id})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	require.Equal(t, "<main><p>Hi</p>\n</main>", tpl.Html)
	res = e.do(e.keyA, http.MethodPost, "/v1/campaigns", map[string]any{"name": "c", "subject": "S", "from_email": "a@example.com",
		"content_type": "markdown", "markdown": "Yo", "layout_id": own.Id})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	camp := decodeAs[api.Campaign](t, res)
	require.Equal(t, "<main><p>Yo</p>\n</main>", camp.HtmlTemplate)

	// Another field alone leaves the layout as it is.
	res = e.do(e.keyA, http.MethodPatch, "/v1/templates/"+itoa(tpl.Id), map[string]any{"name": "renamed"})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Equal(t, own.Id, *decodeAs[api.Template](t, res).LayoutId)

	res = e.do(e.keyA, http.MethodPatch, "/v1/templates/"+itoa(tpl.Id), map[string]any{"layout_id": nil})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	tpl = decodeAs[api.Template](t, res)
	require.Nil(t, tpl.LayoutId)
	require.Equal(t, "<div><p>Hi</p>\n</div>", tpl.Html)

	res = e.do(e.keyA, http.MethodPatch, "/v1/campaigns/"+itoa(camp.Id), map[string]any{"layout_id": nil})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	camp = decodeAs[api.Campaign](t, res)
	require.Nil(t, camp.LayoutId)
	require.Equal(t, "<div><p>Yo</p>\n</div>", camp.HtmlTemplate)

	res = e.do(e.keyA, http.MethodDelete, "/v1/layouts/"+itoa(own.Id), nil)
	require.Equal(t, http.StatusNoContent, res.Status, string(res.Body))
	// 0 is not a layout: only null clears.
	res = e.do(e.keyA, http.MethodPatch, "/v1/templates/"+itoa(tpl.Id), map[string]any{"layout_id": 0})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, string(res.Body))
	require.Equal(t, []string{"/layout_id"}, problemPointers(t, res.Body))
}
