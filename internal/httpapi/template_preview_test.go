package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestTemplatePreviewUnsaved: POST /v1/templates/preview renders what an editor
// holds, saving nothing; a template error names its field and the line it is on
// (parse, limit and execution errors alike); hostile input is a 422 naming the
// field; a read-only key may preview.
func TestTemplatePreviewUnsaved(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, http.MethodPost, "/v1/templates/preview", map[string]any{"subject": "Hello {{.Name}}",
		"html": "<p>Hi {{.Name}}, {{.Attributes.plan}}</p>", "text": "Hi {{.Name}}", "sample_data": map[string]any{"plan": "pro"}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	out := decodeAs[api.Rendered](t, res)
	require.Equal(t, "Hello Sample Subscriber", out.Subject)
	require.Contains(t, out.Html, "pro")
	res = e.do(e.keyA, http.MethodPost, "/v1/templates/preview", map[string]any{"subject": "Hi", "text": "Hi {{.Name}} {{.Attributes.plan}}",
		"sample_data": map[string]any{"plan": "pro"}, "data": map[string]any{"plan": "free"}, "email": "ada@example.com", "name": "Ada"})
	require.Equal(t, "Hi Ada free", decodeAs[api.Rendered](t, res).Text)
	var n int
	require.NoError(t, e.pool.QueryRow(t.Context(), `SELECT count(*) FROM templates`).Scan(&n))
	require.Zero(t, n, "a preview saves nothing")

	type fieldLine struct {
		Pointer string `json:"pointer"`
		Line    int    `json:"line"`
	}
	for _, c := range []struct {
		body    map[string]any
		pointer string
		line    int
	}{
		{map[string]any{"subject": "Hi", "html": "<p>a</p>\n<p>{{.Attributes.plan</p>"}, "/html", 2},
		{map[string]any{"subject": "Hi", "text": "a\nb\nc\n{{if .Name}}"}, "/text", 4},
		{map[string]any{"subject": "Hi {{.Nope", "text": "x"}, "/subject", 1},
		{map[string]any{"subject": "Hi", "text": "a\n{{env \"HOME\"}}"}, "/text", 2},
		{map[string]any{"subject": "Hi", "text": "a\n{{index .Attributes.l 3}}", "sample_data": map[string]any{"l": []int{1}}}, "/text", 2},
		{map[string]any{"subject": " ", "text": "x"}, "/subject", 0},
		{map[string]any{"subject": "Hi"}, "/html", 0},
		{map[string]any{"subject": "Hi", "text": "x", "sample_data": []int{1}}, "/sample_data", 0},
		{map[string]any{"subject": "Hi", "text": "x", "data": "no"}, "/data", 0},
		{map[string]any{"subject": "Hi", "text": "x", "email": "not an address"}, "/email", 0},
		{map[string]any{"subject": "Hi", "text": "x\x00y"}, "/text", 0},
		{map[string]any{"subject": "Hi", "text": "x", "extra": 1}, "/extra", 0},
		{map[string]any{"subject": strings.Repeat("s", 999), "text": "x"}, "/subject", 0},
	} {
		res := e.do(e.keyA, http.MethodPost, "/v1/templates/preview", c.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", c.body, res.Body)
		var p struct {
			Errors []fieldLine `json:"errors"`
		}
		require.NoError(t, json.Unmarshal(res.Body, &p))
		require.NotEmpty(t, p.Errors, "%s", res.Body)
		require.Equal(t, c.pointer, p.Errors[0].Pointer, "%s", res.Body)
		require.Equal(t, c.line, p.Errors[0].Line, "%s", res.Body)
	}
	// Saving names the line the same way.
	res = e.do(e.keyA, http.MethodPost, "/v1/templates", map[string]any{"name": "t", "subject": "Hi", "html": "<p>a</p>\n\n<p>{{.X</p>"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, string(res.Body), `"pointer":"/html"`)
	require.Contains(t, string(res.Body), `"line":3`)

	ro := decodeAs[api.APIKeyCreated](t, e.do(e.keyA, http.MethodPost, "/v1/api-keys", map[string]any{"name": "ro", "role": "read_only"}))
	require.Equal(t, http.StatusOK, e.do(ro.Token, http.MethodPost, "/v1/templates/preview", map[string]any{"subject": "Hi", "text": "x"}).Status)
}
