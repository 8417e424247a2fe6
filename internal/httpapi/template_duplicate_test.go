package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestTemplateDuplicate: a template's copy carries everything of it, attachments
// included, under "<name> (copy)", then "(copy 2)" when that name is taken; the
// original is unchanged, another account's key gets 404, an unknown id 404.
func TestTemplateDuplicate(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/templates", map[string]any{"name": "receipt", "subject": "Receipt {{.Name}}",
		"html": "<p>Hi {{.Name}}</p>", "text": "Hi {{.Name}}", "language": "fr", "sample_data": map[string]any{"order": "A-1"},
		"track_clicks": true, "attachments": []any{file("terms.pdf", b64s("%PDF terms"))}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	orig := decodeAs[api.Template](t, res)

	res = e.do(e.keyB, "POST", "/v1/templates/"+itoa(orig.Id)+"/duplicate", nil)
	require.Equal(t, http.StatusNotFound, res.Status, string(res.Body))
	res = e.do(e.keyA, "POST", "/v1/templates/99999999/duplicate", nil)
	require.Equal(t, http.StatusNotFound, res.Status, string(res.Body))

	for _, name := range []string{"receipt (copy)", "receipt (copy 2)"} {
		res = e.do(e.keyA, "POST", "/v1/templates/"+itoa(orig.Id)+"/duplicate", nil)
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
		c := decodeAs[api.Template](t, res)
		require.NotEqual(t, orig.Id, c.Id)
		require.Equal(t, name, c.Name)
		require.Equal(t, orig.Subject, c.Subject)
		require.Equal(t, orig.Html, c.Html)
		require.Equal(t, orig.Text, c.Text)
		require.Equal(t, orig.Language, c.Language)
		require.JSONEq(t, string(orig.SampleData), string(c.SampleData))
		require.True(t, c.TrackClicks)
		require.NotNil(t, c.Attachments)
		require.Len(t, *c.Attachments, 1)
		require.Equal(t, (*orig.Attachments)[0].Filename, (*c.Attachments)[0].Filename)
	}
	res = e.do(e.keyA, "GET", "/v1/templates/"+itoa(orig.Id), nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Equal(t, "receipt", decodeAs[api.Template](t, res).Name)
}
