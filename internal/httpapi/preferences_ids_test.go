package httpapi_test

import (
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// The preference page reads and changes the lists of the subscriber its link
// names, in the link's account, with ids that differ: subscriber 3 of account 1,
// accounts 2 and 3 around with public lists. The page once passed the two ids
// swapped, so subscriber 3 of account 1 saw account 3's public list instead of
// their own, and "save preferences" took them off their own list.
func TestPreferencePageActsOnTheLinksSubscriber(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	require.Equal(t, int64(1), e.accountID)
	require.Equal(t, int64(3), e.subscriberID)
	a, b := e.withLists(t)

	resp, err := http.Get(e.link())
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(page), `value="`+itoa(a)+`" id="list-`+itoa(a)+`" checked`, "their own list, subscribed")
	require.Contains(t, string(page), "B beta")
	require.NotContains(t, string(page), "Public list of", "another account's public list")

	// Save with both lists kept: nothing changes, both stay subscribed.
	code, body := postForm(t, e.link(), url.Values{"action": {"preferences"}, "list": {itoa(a), itoa(b)}})
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `id="list-`+itoa(a)+`" checked`)
	require.NotContains(t, body, "Public list of")
	for _, l := range []int64{a, b} {
		st, _ := e.membership(t, l)
		require.Equal(t, "subscribed", st)
	}
	var n int
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM list_members WHERE account_id <> $1`, e.accountID).Scan(&n))
	require.Zero(t, n, "no membership in another account")
}
