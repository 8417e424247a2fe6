package httpapi_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// noRedirect lets a test see a 3xx instead of following it.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func oneClickPost(t *testing.T, url, contentType string, body io.Reader) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestOneClickUnsubscribeURLEncoded(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	// GET shows the page and changes nothing (mail scanners fetch header URLs).
	resp, err := noRedirect.Get(e.link())
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(page), `<form method="post">`)
	require.NotContains(t, string(page), "<script")
	reason, _ := e.suppressed(t)
	require.Empty(t, reason)

	// The request Gmail documents in its sender guidelines (support.google.com/a/answer/81126,
	// RFC 8058 §3.1): 200, empty body, suppressed.
	resp, body := oneClickPost(t, e.link(), "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, body)
	reason, source := e.suppressed(t)
	require.Equal(t, "unsubscribe", reason)
	require.Equal(t, fmt.Sprintf("one-click:campaign:%d", e.campaignID), source)
	var status, feedback string
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT s.status, d.feedback FROM subscribers s JOIN sends d ON d.subscriber_id = s.id WHERE s.id = $1`,
		e.subscriberID).Scan(&status, &feedback))
	require.Equal(t, "unsubscribed", status)
	require.Equal(t, "unsubscribe", feedback)

	// Idempotent.
	resp, body = oneClickPost(t, e.link(), "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, body)
}

func TestOneClickUnsubscribeMultipartAndEmpty(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	require.NoError(t, mw.WriteField("List-Unsubscribe", "One-Click"))
	require.NoError(t, mw.Close())
	resp, body := oneClickPost(t, e.link(), mw.FormDataContentType(), &buf)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, body)
	reason, _ := e.suppressed(t)
	require.Equal(t, "unsubscribe", reason)

	e2 := setupOptout(t, "")
	resp, body = oneClickPost(t, e2.link(), "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "an empty body (our own page's button) is consent too")
	require.Empty(t, body)
	reason, _ = e2.suppressed(t)
	require.Equal(t, "unsubscribe", reason)
}

func TestOneClickUnsubscribeBadToken(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	wrongKeys, err := token.NewRing([]string{"k1:some-other-secret-0123456789"})
	require.NoError(t, err)
	wrong := unsubscribe.NewSigner(wrongKeys)
	forged := e.url + "/u/" + wrong.Token(e.accountID, e.campaignID, e.subscriberID)
	otherRecipient := e.url + "/u/" + e.signer.Token(e.accountID, e.campaignID, e.subscriberID+1000)
	for _, u := range []string{forged, otherRecipient, e.url + "/u/garbage", e.link() + "x"} {
		resp, body := oneClickPost(t, u, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
		require.Equal(t, http.StatusNotFound, resp.StatusCode, u)
		require.Empty(t, body)
		resp, err := noRedirect.Get(u)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
	}
	reason, _ := e.suppressed(t)
	require.Empty(t, reason)
}

func TestUnsubscribePageLanguage(t *testing.T) {
	t.Parallel()
	for lang, want := range map[string]string{"fr-CA": "Me désabonner", "de": "Von allem abmelden", "": "Unsubscribe", "xx": "Unsubscribe"} {
		e := setupOptout(t, lang)
		resp, err := http.Get(e.link())
		require.NoError(t, err)
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Contains(t, string(page), want, lang)
	}
}

// TestOneClickUnsubscribeSuppressesAddressMailedTo: the subscriber changed address
// after the message went out; the link in that message must suppress the address the
// message went to, not the subscriber's new one.
func TestOneClickUnsubscribeSuppressesAddressMailedTo(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	_, err := e.pool.Exec(e.ctx, `UPDATE subscribers SET email = 'new@example.com', email_lower = 'new@example.com' WHERE id = $1`, e.subscriberID)
	require.NoError(t, err)
	resp, _ := oneClickPost(t, e.link(), "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	reason, _ := e.suppressed(t)
	require.Equal(t, "unsubscribe", reason, "the address the message went to is suppressed")
	var n int
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM suppressions WHERE account_id = $1 AND email_lower = 'new@example.com'`,
		e.accountID).Scan(&n))
	require.Zero(t, n, "the subscriber's new address is not suppressed")
}

// An oversize form body is refused (400) and changes nothing: it must not fall
// through to the one-click opt-out because its read error went unseen.
func TestOneClickOversizeBodyChangesNothing(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	body := "List-Unsubscribe=One-Click&pad=" + strings.Repeat("x", 20<<10)
	resp, _ := oneClickPost(t, e.link(), "application/x-www-form-urlencoded", strings.NewReader(body))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	reason, _ := e.suppressed(t)
	require.Empty(t, reason)
}
