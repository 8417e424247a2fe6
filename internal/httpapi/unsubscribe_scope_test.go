package httpapi_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// withLists puts the recipient in lists A and B and makes the campaign a campaign to A.
func (e *optoutEnv) withLists(t *testing.T) (a, b int64) {
	t.Helper()
	for _, p := range []struct {
		name string
		id   *int64
	}{{"A news", &a}, {"B beta", &b}} {
		f := testfactory.New(e.pool)
		*p.id = f.List(t, e.accountID, p.name)
		f.Members(t, e.accountID, *p.id, e.subscriberID)
	}
	_, err := e.pool.Exec(e.ctx, `UPDATE campaigns SET list_ids = $1 WHERE id = $2`, []int64{a}, e.campaignID)
	require.NoError(t, err)
	return a, b
}

func (e *optoutEnv) membership(t *testing.T, list int64) (status, source string) {
	t.Helper()
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT status, status_source FROM list_members WHERE list_id = $1 AND subscriber_id = $2`,
		list, e.subscriberID).Scan(&status, &source))
	return status, source
}

// built runs the recipient build of a new campaign to lists and returns its size.
func (e *optoutEnv) built(t *testing.T, lists []int64) int64 {
	t.Helper()
	now := time.Now()
	c := testfactory.New(e.pool).Campaign(t, e.accountID, testfactory.Campaign{Name: "next", FromEmail: "news@example.com",
		ListIDs: lists, Status: "approved", ScheduledFor: &now, ApprovedAt: &now})
	b, started, err := executor.StartCampaign(e.ctx, e.pool, c, nil)
	require.NoError(t, err)
	require.True(t, started)
	return b.Rows
}

func TestOneClickLeavesOnlyTheCampaignsLists(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	a, b := e.withLists(t)

	resp, body := oneClickPost(t, e.link(), "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, body)
	status, source := e.membership(t, a)
	require.Equal(t, "unsubscribed", status)
	require.Equal(t, "one-click:campaign:"+itoa(e.campaignID), source)
	status, _ = e.membership(t, b)
	require.Equal(t, "subscribed", status, "list B is untouched")
	reason, _ := e.suppressed(t)
	require.Empty(t, reason, "no account-wide suppression")
	var feedback string
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT feedback FROM sends WHERE campaign_id = $1`, e.campaignID).Scan(&feedback))
	require.Equal(t, "unsubscribe", feedback)

	require.Equal(t, int64(1), e.built(t, []int64{b}), "the next campaign to B still reaches the recipient")
	require.Equal(t, int64(0), e.built(t, []int64{a}), "the next campaign to A skips the recipient")

	// Idempotent.
	resp, _ = oneClickPost(t, e.link(), "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	status, _ = e.membership(t, b)
	require.Equal(t, "subscribed", status)
}

func TestOneClickWithAccountScopeSuppresses(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	a, b := e.withLists(t)
	_, err := e.pool.Exec(e.ctx, `UPDATE accounts SET unsubscribe_scope = 'account' WHERE id = $1`, e.accountID)
	require.NoError(t, err)
	resp, _ := oneClickPost(t, e.link(), "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	reason, _ := e.suppressed(t)
	require.Equal(t, "unsubscribe", reason)
	require.Equal(t, int64(0), e.built(t, []int64{a, b}))
}

func postForm(t *testing.T, link string, form url.Values) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, link, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestPreferencePage(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "fr")
	a, b := e.withLists(t)
	other := testfactory.New(e.pool).List(t, e.accountID, "internal: churned") // a list of the account the recipient is not on: not shown, cannot be joined

	resp, err := http.Get(e.link())
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(page), `value="`+itoa(a)+`" id="list-`+itoa(a)+`" checked`)
	require.Contains(t, string(page), "B beta")
	require.NotContains(t, string(page), "churned")
	require.Contains(t, string(page), "Me désabonner de tout")
	require.NotContains(t, string(page), "<script")

	// Keep B only; an id of a list the recipient is not on is ignored.
	code, body := postForm(t, e.link(), url.Values{"action": {"preferences"}, "list": {itoa(b), itoa(other)}})
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "Vos préférences sont enregistrées.")
	require.Contains(t, body, `id="list-`+itoa(a)+`">`, "A is unchecked now")
	st, source := e.membership(t, a)
	require.Equal(t, "unsubscribed", st)
	require.Equal(t, "preferences:campaign:"+itoa(e.campaignID), source)
	st, _ = e.membership(t, b)
	require.Equal(t, "subscribed", st)
	var n int64
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM list_members WHERE list_id = $1`, other).Scan(&n))
	require.Zero(t, n)
	reason, _ := e.suppressed(t)
	require.Empty(t, reason)

	// Re-subscribe to A.
	code, _ = postForm(t, e.link(), url.Values{"action": {"preferences"}, "list": {itoa(a), itoa(b)}})
	require.Equal(t, http.StatusOK, code)
	st, _ = e.membership(t, a)
	require.Equal(t, "subscribed", st)

	// Hostile values change nothing.
	for _, v := range []string{"x", "-1", "1; DROP TABLE lists", "99999999999999999999"} {
		code, _ = postForm(t, e.link(), url.Values{"action": {"preferences"}, "list": {v}})
		require.Equal(t, http.StatusBadRequest, code, v)
	}
	st, _ = e.membership(t, b)
	require.Equal(t, "subscribed", st)

	// Everything suppresses.
	code, body = postForm(t, e.link(), url.Values{"action": {"everything"}})
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "Vous êtes désabonné(e).")
	reason, _ = e.suppressed(t)
	require.Equal(t, "unsubscribe", reason)

	// A forged token changes nothing and tells nothing.
	code, _ = postForm(t, e.link()+"x", url.Values{"action": {"preferences"}})
	require.Equal(t, http.StatusNotFound, code)
}

func TestAccountUnsubscribeScope(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "GET", "/v1/account", nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, "list", string(decodeAs[api.Account](t, res).UnsubscribeScope), "list is the default")
	res = e.do(e.keyA, "PATCH", "/v1/account", map[string]any{"unsubscribe_scope": "everything"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	res = e.do(e.keyA, "PATCH", "/v1/account", map[string]any{"unsubscribe_scope": "account"})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Equal(t, "account", string(decodeAs[api.Account](t, res).UnsubscribeScope))
	res = e.do(e.keyB, "GET", "/v1/account", nil)
	require.Equal(t, "list", string(decodeAs[api.Account](t, res).UnsubscribeScope), "B's setting is its own")
}

// TestLeavingAListMidSendStopsItsQueuedRows: an opt-out from list A while other
// campaigns are sending takes the recipient's queued rows out of the campaigns to A
// at once (suppressed, with the event), and leaves the rows of campaigns it still
// belongs to through another list; leaving B then stops those too. An API removal
// of a member does the same.
func TestLeavingAListMidSendStopsItsQueuedRows(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	a, b := e.withLists(t)
	running := func(lists []int64, status string) (campaign int64) {
		t.Helper()
		f := testfactory.New(e.pool)
		campaign = f.Campaign(t, e.accountID, testfactory.Campaign{Name: "running", FromEmail: "news@example.com",
			ListIDs: lists, Status: status})
		f.Send(t, e.accountID, campaign, e.subscriberID, testfactory.Send{Email: "Ada@Example.com"})
		return campaign
	}
	sendStatus := func(campaign int64) (status string) {
		t.Helper()
		require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT status FROM sends WHERE campaign_id = $1`, campaign).Scan(&status))
		return status
	}
	toA, toAB, toB, pausedA := running([]int64{a}, "sending"), running([]int64{a, b}, "sending"),
		running([]int64{b}, "sending"), running([]int64{a}, "paused")
	everyone := running([]int64{}, "sending") // a campaign to every subscriber: the suppression list governs it

	resp, _ := oneClickPost(t, e.link(), "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "suppressed", sendStatus(toA))
	require.Equal(t, "suppressed", sendStatus(pausedA))
	require.Equal(t, "queued", sendStatus(toAB), "still a member of B")
	require.Equal(t, "queued", sendStatus(toB))
	require.Equal(t, "queued", sendStatus(everyone))
	var events int
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'send.suppressed'
		AND data->>'reason' = 'left_list' AND (data->>'campaign_id')::bigint IN ($2, $3)`, e.accountID, toA, pausedA).Scan(&events))
	require.Equal(t, 2, events)

	// The preference page: leave B too.
	code, _ := postForm(t, e.link(), url.Values{"action": {"preferences"}})
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "suppressed", sendStatus(toAB))
	require.Equal(t, "suppressed", sendStatus(toB))
	require.Equal(t, "queued", sendStatus(everyone))

	// Rejoin B on the page, queue a new campaign to B, then the tenant removes the member by API.
	code, _ = postForm(t, e.link(), url.Values{"action": {"preferences"}, "list": {itoa(b)}})
	require.Equal(t, http.StatusOK, code)
	toB2 := running([]int64{b}, "sending")
	req, err := http.NewRequest(http.MethodDelete, e.url+"/v1/lists/"+itoa(b)+"/members",
		strings.NewReader(`{"subscriber_ids":[`+itoa(e.subscriberID)+`]}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 300)
	require.Equal(t, "suppressed", sendStatus(toB2))
}
