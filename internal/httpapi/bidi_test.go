package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// bidiControls is every bidirectional formatting character (Unicode's Bidi_Control):
// the marks, the embeddings and overrides, the isolates.
var bidiControls = []rune{'\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e',
	'\u2066', '\u2067', '\u2068', '\u2069'}

// TestAttachmentFilenameRefusesEveryBidiControl: every field that refuses
// bidirectional formatting characters — an attachment's filename, on each route
// that takes files — refuses each of them with a 422 naming the field, and stores
// nothing. The marks U+200E, U+200F and U+061C once passed.
func TestAttachmentFilenameRefusesEveryBidiControl(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	res := e.do(a, "POST", "/v1/campaigns", map[string]any{"name": "c", "subject": "S", "from_email": "a@example.com", "text_template": "Hi"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	campaignPath := "/v1/campaigns/" + itoa(decodeAs[api.Campaign](t, res).Id)
	res = e.do(a, "POST", "/v1/templates", map[string]any{"name": "t", "subject": "S", "text": "Hi"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	templatePath := "/v1/templates/" + itoa(decodeAs[api.Template](t, res).Id)

	stored := func() int {
		var n int
		require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM messages)
			+ (SELECT count(*) FROM campaigns) + (SELECT count(*) FROM templates) + (SELECT count(*) FROM attachment_blobs)
			+ (SELECT count(*) FROM campaign_attachments) + (SELECT count(*) FROM template_attachments)`).Scan(&n))
		return n
	}
	before := stored()
	for _, r := range bidiControls {
		name := fmt.Sprintf("invoice%cfdp.exe", r)
		files := []any{file("ok.txt", b64s("ok")), file(name, b64s("x"))}
		for _, c := range []struct{ method, path string }{
			{"POST", "/v1/messages"},
			{"POST", "/v1/campaigns"},
			{"PATCH", campaignPath},
			{"POST", "/v1/templates"},
			{"PATCH", templatePath},
		} {
			var body map[string]any
			switch c.path {
			case "/v1/messages":
				body = receipt(map[string]any{"attachments": files})
			case "/v1/campaigns":
				body = map[string]any{"name": "c", "subject": "S", "from_email": "a@example.com", "text_template": "Hi", "attachments": files}
			case "/v1/templates":
				body = map[string]any{"name": "t", "subject": "S", "text": "Hi", "attachments": files}
			default:
				body = map[string]any{"attachments": files}
			}
			res := e.do(a, c.method, c.path, body, "Idempotency-Key", fmt.Sprintf("bidi-%U-%s-%s", r, c.method, c.path))
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%U on %s %s: %s", r, c.method, c.path, res.Body)
			require.Equal(t, []string{"/attachments/1/filename"}, decodeAs[problem](t, res).pointers(), "%U on %s %s", r, c.method, c.path)
		}
		res := e.do(a, "POST", "/v1/messages/batch", map[string]any{"messages": []any{map[string]any{
			"idempotency_key": fmt.Sprintf("bidi-%U", r), "message": receipt(map[string]any{"attachments": files})}}})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		out := decodeAs[api.MessageBatchResult](t, res)
		require.Equal(t, http.StatusUnprocessableEntity, out.Results[0].Status, "%U in a batch", r)
		require.Equal(t, "/messages/0/message/attachments/1/filename", (*out.Results[0].Problem.Errors)[0].Pointer)
	}
	require.Equal(t, before, stored(), "a refused file stores nothing")
}
