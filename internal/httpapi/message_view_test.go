package httpapi_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/tracking"
)

var viewURL = regexp.MustCompile(`https://mail\.example\.com/v/([A-Za-z0-9_-]+)`)

// A message's {{.WebViewURL}} is a signed link to that message as its recipient
// got it: its own templates over its own data, untracked, under the strict CSP.
// Only its token opens it (another message's shows that one; a campaign view
// token with the same ids, a tampered token and a message token of another
// purpose are 404), and once retention deletes the message the link is 404.
func TestMessageWebView(t *testing.T) {
	t.Parallel()
	m := setupMessageTracking(t)
	m.builder.WebView = func(accountID, streamID, sendID, messageID int64) string {
		return m.tokens.MessageViewURL(tracking.Send{AccountID: accountID, CampaignID: streamID, SendID: sendID, MessageID: messageID})
	}
	ctx := context.Background()
	html := `<p>Hi {{.Name}}, order {{.Attributes.order}}</p><a href="{{.WebViewURL}}">view in browser</a>` +
		`<a href="https://shop.example/order">order</a><script>alert(1)</script>`
	send := func(key, to, name, order string) (api.Message, string) {
		res := m.do(m.keyA, "POST", "/v1/messages", receipt(map[string]any{"to": to, "to_name": name, "html": html,
			"data": map[string]any{"order": order}, "track_clicks": true}), "Idempotency-Key", key)
		require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
		msg := decodeAs[api.Message](t, res)
		_, pm := m.claimAndBuild(t, msg.Id)
		found := viewURL.FindStringSubmatch(pm.HTML)
		require.NotNil(t, found, pm.HTML)
		return msg, found[1]
	}
	ada, adaTok := send("view-1", "ada@example.com", "Ada", "A-1")
	_, bobTok := send("view-2", "bob@example.com", "Bob", "B-2")
	require.NotEqual(t, adaTok, bobTok)

	res := m.do("", "GET", "/v/"+adaTok, nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	requireStrictCSP(t, res)
	require.Equal(t, "private, no-store", res.Header.Get("Cache-Control"))
	body := string(res.Body)
	require.Contains(t, body, "Hi Ada, order A-1")
	require.Contains(t, body, `href="https://shop.example/order"`, "the web view is not tracked")
	require.Contains(t, body, `href="https://mail.example.com/v/`+adaTok+`"`, "its own address")
	require.NotContains(t, body, "Bob")
	res = m.do("", "GET", "/v/"+bobTok, nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Contains(t, string(res.Body), "Hi Bob, order B-2")
	require.NotContains(t, string(res.Body), "Ada")

	sendOf, err := m.tokens.OpenMessageView(adaTok)
	require.NoError(t, err)
	require.Equal(t, ada.Id, sendOf.MessageID)
	campaignShape := sendOf
	campaignShape.MessageID = 0
	for name, tok := range map[string]string{
		"tampered":                     adaTok[:len(adaTok)-2] + "AA",
		"campaign view with those ids": m.tokens.ViewToken(campaignShape),
		"the message's open token":     m.tokens.OpenToken(sendOf),
		"another stream":               m.tokens.MessageViewToken(tracking.Send{AccountID: sendOf.AccountID, CampaignID: sendOf.CampaignID + 1, SendID: sendOf.SendID, MessageID: sendOf.MessageID}),
		"another account":              m.tokens.MessageViewToken(tracking.Send{AccountID: sendOf.AccountID + 1, CampaignID: sendOf.CampaignID, SendID: sendOf.SendID, MessageID: sendOf.MessageID}),
	} {
		res := m.do("", "GET", "/v/"+tok, nil)
		require.Equal(t, http.StatusNotFound, res.Status, name)
		require.NotContains(t, string(res.Body), "Ada", name)
	}

	// Retention deletes the message (and its send row): the link is gone.
	_, err = m.pool.Exec(ctx, `DELETE FROM messages WHERE id = $1`, ada.Id)
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, m.do("", "GET", "/v/"+adaTok, nil).Status)
	require.Equal(t, http.StatusOK, m.do("", "GET", "/v/"+bobTok, nil).Status)
}
