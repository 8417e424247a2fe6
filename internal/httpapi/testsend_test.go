package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/provider"
)

// fakeSender stands in for the email provider (the outside world).
type fakeSender struct {
	mu   sync.Mutex
	sent []provider.Message
}

func (f *fakeSender) Send(_ context.Context, m provider.Message) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.HasPrefix(m.To, "bounce") {
		return "", &provider.Error{Class: provider.Permanent, Code: 550, Err: errors.New("mailbox unavailable at mx.internal.example")}
	}
	f.sent = append(f.sent, m.Clone())
	return "pm-" + m.To, nil
}

func TestCampaignTestSend(t *testing.T) {
	t.Parallel()
	fake := &fakeSender{}
	e := setupDeps(t, func(d *httpapi.Deps) { d.TestSender = fake })
	res := e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "known@example.com", "name": "Known",
		"attributes": map[string]any{"plan": "gold"}})
	require.Equal(t, http.StatusCreated, res.Status)
	c := createCampaign(t, e, map[string]any{"text_template": "Hi {{.Name}} on {{.Attributes.plan}}"})
	path := "/v1/campaigns/" + itoa(c.Id) + "/test"

	res = e.do(e.keyA, "POST", path, map[string]any{"emails": []string{"Known@example.com", "stranger@example.com", "bounce@example.com"}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	out := decodeAs[api.TestSendResult](t, res)
	require.Len(t, out.Results, 3)
	require.True(t, out.Results[0].Sent)
	require.True(t, out.Results[1].Sent)
	require.False(t, out.Results[2].Sent)
	require.Equal(t, "permanent failure (provider status 550)", *out.Results[2].Error, "the cause is logged, not echoed")

	require.Len(t, fake.sent, 2)
	require.Equal(t, "[TEST] Hello Known", fake.sent[0].Subject)
	require.Equal(t, "Hi Known on gold", fake.sent[0].Text)
	require.Equal(t, "Hi  on ", fake.sent[1].Text)
	require.NotEqual(t, fake.sent[0].JobID, fake.sent[1].JobID)

	res = e.do(e.keyA, "GET", "/v1/campaigns/"+itoa(c.Id)+"/stats", nil)
	require.EqualValues(t, 0, decodeAs[api.CampaignStats](t, res).Total, "test sends are not campaign sends")

	many := make([]string, 11)
	for i := range many {
		many[i] = "x" + itoa(int64(i)) + "@example.com"
	}
	res = e.do(e.keyA, "POST", path, map[string]any{"emails": many})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/emails"}, decodeAs[problem](t, res).pointers())
	res = e.do(e.keyA, "POST", path, map[string]any{"emails": []string{"ok@example.com", "not an address"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Equal(t, []string{"/emails/1"}, decodeAs[problem](t, res).pointers())
	require.Len(t, fake.sent, 2, "a refused request sends nothing")
}

// A suppressed address is reported, not sent to, exactly as a real send would skip it.
func TestCampaignTestSendSkipsSuppressed(t *testing.T) {
	t.Parallel()
	fake := &fakeSender{}
	e := setupDeps(t, func(d *httpapi.Deps) { d.TestSender = fake })
	res := e.do(e.keyA, "POST", "/v1/suppressions", map[string]any{"email": "Gone@example.com", "reason": "complaint"})
	require.Less(t, res.Status, 300, "%s", res.Body)
	// Another tenant's suppression of the other address does not count here.
	res = e.do(e.keyB, "POST", "/v1/suppressions", map[string]any{"email": "here@example.com"})
	require.Less(t, res.Status, 300, "%s", res.Body)
	c := createCampaign(t, e, map[string]any{})

	res = e.do(e.keyA, "POST", "/v1/campaigns/"+itoa(c.Id)+"/test",
		map[string]any{"emails": []string{"gone@EXAMPLE.com", "here@example.com"}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	out := decodeAs[api.TestSendResult](t, res)
	require.False(t, out.Results[0].Sent)
	require.Equal(t, "suppressed (complaint): not sent", *out.Results[0].Error)
	require.True(t, out.Results[1].Sent)
	require.Len(t, fake.sent, 1)
	require.Equal(t, "here@example.com", fake.sent[0].To)
}

// A test message is built by the same builder as real sends: a blank body is
// refused, and the Message-ID is keyed.
func TestCampaignTestSendBuildsLikeRealSends(t *testing.T) {
	t.Parallel()
	fake := &fakeSender{}
	e := setupDeps(t, func(d *httpapi.Deps) { d.TestSender = fake })
	c := createCampaign(t, e, map[string]any{"html_template": "  ", "text_template": "{{if .Name}} {{end}}"})
	res := e.do(e.keyA, "POST", "/v1/campaigns/"+itoa(c.Id)+"/test", map[string]any{"emails": []string{"a@example.com"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Equal(t, []string{"/html_template"}, decodeAs[problem](t, res).pointers())
	require.Empty(t, fake.sent)

	c = createCampaign(t, e, map[string]any{})
	res = e.do(e.keyA, "POST", "/v1/campaigns/"+itoa(c.Id)+"/test", map[string]any{"emails": []string{"a@example.com"}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Regexp(t, `^[a-z2-7]{26}@`, fake.sent[0].MessageID)
}
