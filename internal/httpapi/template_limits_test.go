package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/httpapi"
)

// Templates that could stall the executor are refused with a 422 naming the field,
// on create, update, approve and test, and nothing changes.
func TestTemplateLimitsAnswer422(t *testing.T) {
	t.Parallel()
	fake := &fakeSender{}
	e := setupDeps(t, func(d *httpapi.Deps) { d.TestSender = fake })
	for field, tpl := range map[string]string{
		"subject":       `{{range 100000000}}{{end}}x`,
		"html_template": `{{range 3000000}}{{printf "%0100d" 1}}{{end}}`,
		"text_template": `{{printf "%0999999999d" 1}}`,
	} {
		res := e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "x", "subject": "s", "from_email": "n@example.com",
			"text_template": "t", field: tpl})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s %s", field, res.Body)
		require.Equal(t, []string{"/" + field}, decodeAs[problem](t, res).pointers())

		c := createCampaign(t, e, nil)
		path := "/v1/campaigns/" + itoa(c.Id)
		res = e.do(e.keyA, "PATCH", path, map[string]any{field: tpl})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s %s", field, res.Body)
		require.Equal(t, []string{"/" + field}, decodeAs[problem](t, res).pointers())

		// A template stored before the limits existed is refused at approve and test.
		column := map[string]string{"subject": "subject", "html_template": "html_template", "text_template": "text_template"}[field]
		_, err := e.pool.Exec(context.Background(), "UPDATE campaigns SET "+column+" = $1 WHERE id = $2", tpl, c.Id)
		require.NoError(t, err)
		res = e.do(e.keyA, "POST", path+"/approve", nil)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s %s", field, res.Body)
		require.Equal(t, []string{"/" + field}, decodeAs[problem](t, res).pointers())
		res = e.do(e.keyA, "POST", path+"/test", map[string]any{"emails": []string{"a@example.com"}})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s %s", field, res.Body)
		require.Equal(t, []string{"/" + field}, decodeAs[problem](t, res).pointers())
		res = e.do(e.keyA, "GET", path, nil)
		require.Contains(t, string(res.Body), `"status":"draft"`)
	}
	require.Empty(t, fake.sent)
}
