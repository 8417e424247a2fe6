package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/httpapi"
)

// TestCampaignTestSendFromTemplate: a draft made from a template has no content of
// its own until approval copies the template's; its test send renders the
// template, as its preview does. (Found by the dashboard's browser journey: the
// test send of such a draft answered 422 "the message renders with no body".)
func TestCampaignTestSendFromTemplate(t *testing.T) {
	t.Parallel()
	fake := &fakeSender{}
	e := setupDeps(t, func(d *httpapi.Deps) { d.TestSender = fake })
	res := e.do(e.keyA, http.MethodPost, "/v1/templates", map[string]any{"name": "welcome",
		"subject": "Hello {{.Name}}", "text": "Hi {{.Name}}", "html": "<p>Hi {{.Name}}</p>"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	tpl := decodeAs[api.Template](t, res)
	res = e.do(e.keyA, http.MethodPost, "/v1/campaigns", map[string]any{"name": "from template",
		"from_email": "news@example.com", "template_id": tpl.Id})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	c := decodeAs[api.Campaign](t, res)
	res = e.do(e.keyA, http.MethodPost, "/v1/subscribers", map[string]any{"email": "ada@example.com", "name": "Ada"})
	require.Equal(t, http.StatusCreated, res.Status)

	res = e.do(e.keyA, http.MethodPost, "/v1/campaigns/"+itoa(c.Id)+"/test", map[string]any{"emails": []string{"ada@example.com"}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.True(t, decodeAs[api.TestSendResult](t, res).Results[0].Sent)
	require.Len(t, fake.sent, 1)
	require.Equal(t, "[TEST] Hello Ada", fake.sent[0].Subject)
	require.Equal(t, "Hi Ada", fake.sent[0].Text)
	require.Equal(t, "<p>Hi Ada</p>", fake.sent[0].HTML)
}
