package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestLintContent: the lint answers its findings with rule, severity, part and
// excerpt, an empty list for clean content, and 422 naming the field for a bad
// kind; it changes nothing and a read-only key may ask.
func TestLintContent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/templates/lint", map[string]any{"subject": "SPRING SALE NOW!!!",
		"html": `<p><a href="https://bit.ly/x">Click here</a> <img src="a.png"></p>`})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	got := decodeAs[api.LintResult](t, res)
	var rules []string
	for _, f := range got.Findings {
		rules = append(rules, f.Rule)
	}
	require.Equal(t, []string{"subject-all-caps", "subject-exclamations", "link-text-generic", "link-shortener",
		"image-alt-missing", "images-only", "unsubscribe-missing", "text-missing"}, rules)
	require.Equal(t, api.LintFindingSeverity("warning"), got.Findings[2].Severity)
	require.Equal(t, "/html", got.Findings[2].Field)
	require.Equal(t, `<a href="https://bit.ly/x">Click here</a>`, *got.Findings[2].Excerpt)

	res = e.do(e.keyA, "POST", "/v1/templates/lint", map[string]any{"kind": "message", "subject": "Your receipt",
		"html": "<p>Thank you for order A-1001: two shirts, shipped today to the address you gave us at checkout.</p>", "text": "Thank you"})
	require.Equal(t, http.StatusOK, res.Status)
	require.JSONEq(t, `{"findings":[]}`, string(res.Body))

	res = e.do(e.keyA, "POST", "/v1/templates/lint", map[string]any{"kind": "newsletter", "subject": "x"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, string(res.Body), `"pointer":"/kind"`)

	ro := e.do(e.keyA, "POST", "/v1/api-keys", map[string]any{"name": "ro", "role": "read_only"})
	require.Equal(t, http.StatusCreated, ro.Status, string(ro.Body))
	token := decodeAs[api.APIKeyCreated](t, ro).Token
	require.Equal(t, http.StatusOK, e.do(token, "POST", "/v1/templates/lint", map[string]any{"subject": "x"}).Status)
}
