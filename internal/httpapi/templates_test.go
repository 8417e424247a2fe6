package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

func createTemplate(t *testing.T, e *env, name string) api.Template {
	t.Helper()
	res := e.do(e.keyA, "POST", "/v1/templates", map[string]any{"name": name, "subject": "Receipt {{.Attributes.order}}",
		"html": "<p>Hi {{.Name}}, order {{.Attributes.order}}</p>", "text": "Hi {{.Name}}, order {{.Attributes.order}}",
		"language": "en", "sample_data": map[string]any{"order": "A-1"}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	return decodeAs[api.Template](t, res)
}

func TestTemplateLifecycle(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tpl := createTemplate(t, e, "receipt")
	require.JSONEq(t, `{"order":"A-1"}`, string(tpl.SampleData))
	path := "/v1/templates/" + itoa(tpl.Id)

	res := e.do(e.keyA, "POST", "/v1/templates", map[string]any{"name": "receipt", "subject": "x", "text": "x"})
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)

	// Render: with data, and without (the sample data); the recipient defaults to the sample.
	res = e.do(e.keyA, "POST", path+"/render", map[string]any{"email": "ada@example.com", "name": "Ada <&>",
		"data": map[string]any{"order": "B-2"}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	r := decodeAs[api.Rendered](t, res)
	require.Equal(t, api.Rendered{Subject: "Receipt B-2", Html: "<p>Hi Ada &lt;&amp;&gt;, order B-2</p>", Text: "Hi Ada <&>, order B-2"}, r)
	res = e.do(e.keyA, "POST", path+"/render", map[string]any{})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, "Hi Sample Subscriber, order A-1", decodeAs[api.Rendered](t, res).Text)

	res = e.do(e.keyA, "PATCH", path, map[string]any{"subject": "Your receipt {{.Attributes.order}}"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, "Your receipt {{.Attributes.order}}", decodeAs[api.Template](t, res).Subject)

	// Listing with a cursor.
	createTemplate(t, e, "reset")
	res = e.do(e.keyA, "GET", "/v1/templates?limit=1", nil)
	require.Equal(t, http.StatusOK, res.Status)
	page := decodeAs[api.TemplatePage](t, res)
	require.Len(t, page.Data, 1)
	require.NotNil(t, page.NextCursor)
	res = e.do(e.keyA, "GET", "/v1/templates?limit=1&cursor="+*page.NextCursor, nil)
	page2 := decodeAs[api.TemplatePage](t, res)
	require.Len(t, page2.Data, 1)
	require.Equal(t, "reset", page2.Data[0].Name)

	res = e.do(e.keyA, "DELETE", path, nil)
	require.Equal(t, http.StatusNoContent, res.Status)
	res = e.do(e.keyA, "GET", path, nil)
	require.Equal(t, http.StatusNotFound, res.Status)
	res = e.do(e.keyA, "POST", path+"/render", map[string]any{})
	require.Equal(t, http.StatusNotFound, res.Status)
}

// Hostile or broken templates and data are refused with a 422 naming the field
// (the render package's limits, the same as for campaigns), and nothing changes.
func TestTemplateRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tpl := createTemplate(t, e, "receipt")
	path := "/v1/templates/" + itoa(tpl.Id)
	base := map[string]any{"name": "n", "subject": "s", "text": "t"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range base {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	cases := []struct {
		body    map[string]any
		pointer string
	}{
		{with("subject", `{{range 100000000}}{{end}}x`), "/subject"},
		{with("html", `{{range 3000000}}{{printf "%0100d" 1}}{{end}}`), "/html"},
		{with("text", `{{printf "%0999999999d" 1}}`), "/text"},
		{with("html", `{{.Nope`), "/html"},
		{with("text", `{{call .Email}}`), "/text"},
		{with("text", `{{template "x"}}`), "/text"},
		{with("subject", "   "), "/subject"},
		{map[string]any{"name": "n", "subject": "s"}, "/html"},
		{with("name", "  "), "/name"},
		{with("name", strings.Repeat("n", 201)), "/name"},
		{with("sample_data", []int{1}), "/sample_data"},
		{with("sample_data", map[string]any{"big": strings.Repeat("x", 70<<10)}), "/sample_data"},
		{with("unknown", 1), ""},
	}
	for _, c := range cases {
		res := e.do(e.keyA, "POST", "/v1/templates", c.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", c.body, res.Body)
		if c.pointer != "" {
			require.Contains(t, decodeAs[problem](t, res).pointers(), c.pointer, "%s", res.Body)
		}
		patch := map[string]any{}
		for k, v := range c.body {
			if base[k] != v {
				patch[k] = v
			}
		}
		if len(patch) > 0 {
			res = e.do(e.keyA, "PATCH", path, patch)
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", patch, res.Body)
		}
	}
	// A patch that leaves neither body is refused as stored.
	res := e.do(e.keyA, "PATCH", path, map[string]any{"html": "", "text": " "})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)

	// Render data is bounded and must be an object; the recipient must be an address.
	for _, body := range []map[string]any{
		{"data": map[string]any{"big": strings.Repeat("x", 70<<10)}},
		{"data": "x"},
		{"email": "not an address"},
		{"email": "a@example.com\r\nBcc: x@example.com"},
	} {
		res := e.do(e.keyA, "POST", path+"/render", body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", body, res.Body)
	}
	res = e.do(e.keyA, "GET", path, nil)
	require.Equal(t, tpl, decodeAs[api.Template](t, res), "a refused change changed the template")
	res = e.do(e.keyA, "GET", "/v1/templates", nil)
	require.Len(t, decodeAs[api.TemplatePage](t, res).Data, 1)
}

// A campaign made from a template sends the content the template had when the
// campaign was approved: later edits (and deletion) of the template do not reach an
// approved or running campaign.
func TestCampaignTemplateFrozenAtApproval(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tpl := createTemplate(t, e, "news")
	tpath := "/v1/templates/" + itoa(tpl.Id)

	// Content from a template or inline, not both; only the account's templates.
	for _, extra := range []map[string]any{{"subject": "x"}, {"html_template": "x"}, {"text_template": "x"}} {
		body := map[string]any{"name": "c", "from_email": "news@example.com", "template_id": tpl.Id}
		for k, v := range extra {
			body[k] = v
		}
		res := e.do(e.keyA, "POST", "/v1/campaigns", body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
		require.Equal(t, []string{"/template_id"}, decodeAs[problem](t, res).pointers())
	}
	res := e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "c", "from_email": "news@example.com"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Equal(t, []string{"/subject"}, decodeAs[problem](t, res).pointers())
	res = e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "c", "from_email": "news@example.com", "template_id": 999999})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)

	res = e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "c", "from_email": "news@example.com", "template_id": tpl.Id})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	c := decodeAs[api.Campaign](t, res)
	require.Equal(t, &tpl.Id, c.TemplateId)
	cpath := "/v1/campaigns/" + itoa(c.Id)

	// While a draft uses it, the template cannot be deleted; edits reach the draft.
	res = e.do(e.keyA, "DELETE", tpath, nil)
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
	res = e.do(e.keyA, "PATCH", cpath, map[string]any{"subject": "inline"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	res = e.do(e.keyA, "PATCH", tpath, map[string]any{"text": "v2 {{.Attributes.order}}"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

	res = e.do(e.keyA, "POST", cpath+"/approve", map[string]any{"scheduled_for": "2099-01-01T00:00:00Z"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	approved := decodeAs[api.Campaign](t, res)
	require.Equal(t, "Receipt {{.Attributes.order}}", approved.Subject)
	require.Equal(t, "v2 {{.Attributes.order}}", approved.TextTemplate)
	require.Equal(t, "<p>Hi {{.Name}}, order {{.Attributes.order}}</p>", approved.HtmlTemplate)
	require.Equal(t, "en", approved.Language)

	stored := func() (subject, html, text string) {
		require.NoError(t, e.pool.QueryRow(context.Background(),
			"SELECT subject, html_template, text_template FROM campaigns WHERE id = $1", c.Id).Scan(&subject, &html, &text))
		return
	}
	res = e.do(e.keyA, "PATCH", tpath, map[string]any{"subject": "v3", "text": "v3", "html": "<p>v3</p>"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	s, h, x := stored()
	require.Equal(t, []string{"Receipt {{.Attributes.order}}", "<p>Hi {{.Name}}, order {{.Attributes.order}}</p>", "v2 {{.Attributes.order}}"}, []string{s, h, x})

	// Running: the executor reads the campaign's own columns, which stay as frozen.
	_, err := e.pool.Exec(context.Background(), "UPDATE campaigns SET status = 'sending', started_at = now() WHERE id = $1", c.Id)
	require.NoError(t, err)
	res = e.do(e.keyA, "PATCH", tpath, map[string]any{"text": "v4"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res = e.do(e.keyA, "DELETE", tpath, nil)
	require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
	s, h, x = stored()
	require.Equal(t, []string{"Receipt {{.Attributes.order}}", "<p>Hi {{.Name}}, order {{.Attributes.order}}</p>", "v2 {{.Attributes.order}}"}, []string{s, h, x})
	res = e.do(e.keyA, "GET", cpath, nil)
	require.Nil(t, decodeAs[api.Campaign](t, res).TemplateId)
}
