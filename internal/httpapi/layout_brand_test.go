package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestLayoutHeaderFooterBrand: a layout's header and footer go around the body
// (or at {{header}} and {{footer}}), its brand colours fill the frame's
// {{brand.*}} tokens and are the defaults of a block design framed in it (button,
// text, links, background) where the design sets none. Editing them recomposes a
// draft and a template, never an approved campaign.
func TestLayoutHeaderFooterBrand(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "brand",
		"html":   `<body style="background:{{brand.background}};color:{{brand.text}}"><main>{{content}}</main></body>`,
		"header": `<h1 style="color:{{brand.primary}}">ACME</h1>`, "footer": `<p>ACME Ltd, {{.Email}}</p>`,
		"brand": map[string]any{"primary": "#C2410C", "background": "#f4f4f4", "text": "#1f2933", "link": "#0b6e4f"}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	lay := decodeAs[api.Layout](t, res)
	require.Equal(t, `<h1 style="color:{{brand.primary}}">ACME</h1>`, lay.Header)
	require.Equal(t, "#c2410c", *lay.Brand.Primary, "colours are stored lower-case")
	require.Equal(t, "#0b6e4f", *lay.Brand.Link)

	res = e.do(e.keyA, http.MethodPost, "/v1/templates", map[string]any{"name": "md", "subject": "S",
		"content_type": "markdown", "markdown": "Hi {{.Name}}", "layout_id": lay.Id})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	require.Equal(t, `<body style="background:#f4f4f4;color:#1f2933"><main><h1 style="color:#c2410c">ACME</h1><p>Hi {{.Name}}</p>`+"\n"+
		`<p>ACME Ltd, {{.Email}}</p></main></body>`, tpl.Html)

	design := map[string]any{"rows": []any{map[string]any{"columns": []any{map[string]any{"blocks": []any{
		map[string]any{"type": "heading", "text": "Sale"},
		map[string]any{"type": "button", "text": "Shop", "url": "https://shop.example/"},
		map[string]any{"type": "button", "text": "Own", "url": "https://shop.example/", "background": "#000000"},
		map[string]any{"type": "social", "links": []any{map[string]any{"network": "github", "url": "https://github.com/x"}}},
	}}}}}}
	res = e.do(e.keyA, http.MethodPost, "/v1/lists", map[string]any{"name": "l"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	list := decodeAs[api.List](t, res)
	var camps []api.Campaign
	for _, name := range []string{"draft", "approved"} {
		res = e.do(e.keyA, http.MethodPost, "/v1/campaigns", map[string]any{"name": name, "subject": "S", "from_email": "a@example.com",
			"content_type": "blocks", "blocks": design, "layout_id": lay.Id, "list_ids": []int64{list.Id}})
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
		camps = append(camps, decodeAs[api.Campaign](t, res))
	}
	html := camps[0].HtmlTemplate
	require.Contains(t, html, `margin:0;padding:0;background-color:#f4f4f4"`, "the brand background around the content")
	require.Contains(t, html, `bgcolor="#c2410c"`, "a button with no background of its own takes the brand's primary")
	require.Contains(t, html, `bgcolor="#000000"`, "a button's own background wins")
	require.Contains(t, html, `line-height:1.25;font-weight:bold;text-align:left;color:#1f2933">Sale</h1>`, "headings take the brand's text colour")
	require.Contains(t, html, `style="color:#0b6e4f;text-decoration:underline" target="_blank">GitHub</a>`, "links take the brand's link colour")
	require.Contains(t, html, `<h1 style="color:#c2410c">ACME</h1>`)

	res = e.do(e.keyA, http.MethodPost, "/v1/campaigns/"+itoa(camps[1].Id)+"/approve", map[string]any{"scheduled_for": "2099-01-01T00:00:00Z"})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	approved := decodeAs[api.Campaign](t, res).HtmlTemplate
	require.Equal(t, html, approved)

	// An edit of the header and of one colour: the other colours are kept, the
	// draft and the template recomposed, the approved campaign not.
	res = e.do(e.keyA, http.MethodPatch, "/v1/layouts/"+itoa(lay.Id), map[string]any{"header": `<h1>NEW</h1>`, "brand": map[string]any{"primary": "#123456", "link": ""}})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	lay = decodeAs[api.Layout](t, res)
	require.Equal(t, "#123456", *lay.Brand.Primary)
	require.Equal(t, "#f4f4f4", *lay.Brand.Background)
	require.Nil(t, lay.Brand.Link, "an empty colour takes it away")
	get := func(id int64) string {
		r := e.do(e.keyA, http.MethodGet, "/v1/campaigns/"+itoa(id), nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		return decodeAs[api.Campaign](t, r).HtmlTemplate
	}
	draft := get(camps[0].Id)
	require.Contains(t, draft, `bgcolor="#123456"`)
	require.Contains(t, draft, `<h1>NEW</h1>`)
	require.NotContains(t, draft, "#0b6e4f", "no brand link: the renderer's default")
	require.Equal(t, approved, get(camps[1].Id), "approval pinned the content")
	res = e.do(e.keyA, http.MethodGet, "/v1/templates/"+itoa(tpl.Id), nil)
	require.Contains(t, decodeAs[api.Template](t, res).Html, `<main><h1>NEW</h1><p>Hi {{.Name}}</p>`)

	// {{header}} and {{footer}} place them.
	res = e.do(e.keyA, http.MethodPatch, "/v1/layouts/"+itoa(lay.Id), map[string]any{"html": `<div>{{footer}}<hr>{{content}}<hr>{{header}}</div>`})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	res = e.do(e.keyA, http.MethodGet, "/v1/templates/"+itoa(tpl.Id), nil)
	require.Equal(t, "<div><p>ACME Ltd, {{.Email}}</p><hr><p>Hi {{.Name}}</p>\n<hr><h1>NEW</h1></div>", decodeAs[api.Template](t, res).Html)
}

// TestLayoutBrandBadInput: a bad brand colour, header or footer is a 422 naming
// the field (in its text too), also in a body over SENDONCE_MAX_BODY_BYTES, and
// nothing is stored or changed.
func TestLayoutBrandBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "a", "html": "<div>{{content}}</div>", "header": "<b>H</b>",
		"brand": map[string]any{"primary": "#111111"}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	lay := decodeAs[api.Layout](t, res)
	path := "/v1/layouts/" + itoa(lay.Id)
	count := func() int {
		var n int
		require.NoError(t, e.pool.QueryRow(t.Context(), `SELECT count(*) FROM layouts`).Scan(&n))
		return n
	}
	before := count()
	for _, c := range []struct {
		method, path string
		body         map[string]any
		pointer      string
	}{
		{"POST", "/v1/layouts", map[string]any{"name": "b", "html": "{{content}}", "brand": map[string]any{"primary": "red"}}, "/brand/primary"},
		{"POST", "/v1/layouts", map[string]any{"name": "b", "html": "{{content}}", "brand": map[string]any{"background": "#fff"}}, "/brand/background"},
		{"POST", "/v1/layouts", map[string]any{"name": "b", "html": "{{content}}", "brand": map[string]any{"text": "#12345g"}}, "/brand/text"},
		{"PATCH", path, map[string]any{"brand": map[string]any{"link": "#1234567"}}, "/brand/link"},
		{"POST", "/v1/layouts", map[string]any{"name": "b", "html": "{{content}}", "brand": map[string]any{"hue": "#123456"}}, "/brand/hue"},
		{"POST", "/v1/layouts", map[string]any{"name": "b", "html": "{{content}}", "header": "<p>{{content}}</p>"}, "/header"},
		{"POST", "/v1/layouts", map[string]any{"name": "b", "html": "{{content}}", "header": "<p>{{.Nope</p>"}, "/header"},
		{"PATCH", path, map[string]any{"footer": "<p>{{footer}}</p>"}, "/footer"},
		{"PATCH", path, map[string]any{"footer": "{{env \"HOME\"}}"}, "/footer"},
		{"PATCH", path, map[string]any{"footer": strings.Repeat("x", 600<<10)}, "/footer"},
		// A body over SENDONCE_MAX_BODY_BYTES (1 MiB) still reaches the field limit.
		{"PATCH", path, map[string]any{"header": strings.Repeat("h", 500<<10), "footer": strings.Repeat("x", 600<<10)}, "/footer"},
		{"PATCH", path, map[string]any{"html": "{{header}}{{content}}{{header}}"}, "/html"},
	} {
		res := e.do(e.keyA, c.method, c.path, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s %s %.200v: %.500s", c.method, c.path, c.body, res.Body)
		require.Contains(t, problemPointers(t, res.Body), c.pointer, "%.200v: %.500s", c.body, res.Body)
		require.NotContains(t, string(res.Body), "html template", "the text names the layout's field")
	}
	require.Equal(t, before, count())
	res = e.do(e.keyA, http.MethodGet, path, nil)
	got := decodeAs[api.Layout](t, res)
	require.Equal(t, "<b>H</b>", got.Header)
	require.Equal(t, "", got.Footer)
	require.Equal(t, "#111111", *got.Brand.Primary)
	require.Nil(t, got.Brand.Link)

	// A layout within its bounds (the framed HTML renders at most 512 KiB) is
	// taken though its body is over SENDONCE_MAX_BODY_BYTES: JSON as Go writes it
	// escapes each < and > in six bytes.
	res = e.do(e.keyA, http.MethodPost, "/v1/layouts", map[string]any{"name": "big", "html": "<div>{{content}}</div>",
		"header": strings.Repeat("<b>a</b>", 20<<10), "footer": strings.Repeat("<i>z</i>", 20<<10)})
	require.Equal(t, http.StatusCreated, res.Status, "%.500s", res.Body)
}
