package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// The preference page shows the account's public lists besides the recipient's
// own (private lists it is not on stay unseen); checking a public list joins it;
// each submit that changes something writes the events one-click writes:
// subscriber.unsubscribed (scope list) for the lists left, subscriber.subscribed
// for the lists joined or rejoined. A submit that changes nothing writes none.
func TestPreferencePagePublicListsAndEvents(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	a, b := e.withLists(t)
	pubList, err := store.New(e.pool).ListCreate(e.ctx, store.ListCreateParams{AccountID: e.accountID, Name: "Public digest",
		Optin: "single", Public: true, OptinFromEmail: "news@example.com"})
	require.NoError(t, err)
	pub := pubList.ID
	private := testfactory.New(e.pool).List(t, e.accountID, "internal: churned")

	resp, err := http.Get(e.link())
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(page), `id="list-`+itoa(pub)+`">`, "the public list, unchecked")
	require.Contains(t, string(page), "Public digest")
	require.NotContains(t, string(page), "churned")

	events := func() []map[string]any {
		rows, err := e.pool.Query(e.ctx, `SELECT type, data FROM events WHERE account_id = $1 ORDER BY id`, e.accountID)
		require.NoError(t, err)
		defer rows.Close()
		var out []map[string]any
		for rows.Next() {
			var typ string
			var data []byte
			require.NoError(t, rows.Scan(&typ, &data))
			m := map[string]any{}
			require.NoError(t, json.Unmarshal(data, &m))
			m["type"] = typ
			out = append(out, m)
		}
		return out
	}
	// Leave A, keep B, join the public list; a private list's id is ignored.
	code, body := postForm(t, e.link(), url.Values{"action": {"preferences"}, "list": {itoa(b), itoa(pub), itoa(private)}})
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `id="list-`+itoa(pub)+`" checked`)
	st, _ := e.membership(t, pub)
	require.Equal(t, "subscribed", st)
	st, _ = e.membership(t, a)
	require.Equal(t, "unsubscribed", st)
	var n int
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM list_members WHERE list_id = $1`, private).Scan(&n))
	require.Zero(t, n)
	ev := events()
	require.Len(t, ev, 2)
	require.Equal(t, "subscriber.unsubscribed", ev[0]["type"])
	require.Equal(t, "list", ev[0]["scope"])
	require.Equal(t, []any{float64(a)}, ev[0]["list_ids"])
	require.Equal(t, "Ada@Example.com", ev[0]["email"], "the address the message went to")
	require.Equal(t, "subscriber.subscribed", ev[1]["type"])
	require.Equal(t, []any{float64(pub)}, ev[1]["list_ids"])
	require.Equal(t, "preferences:campaign:"+itoa(e.campaignID), ev[1]["source"])

	// The same submit again changes nothing and writes nothing.
	code, _ = postForm(t, e.link(), url.Values{"action": {"preferences"}, "list": {itoa(b), itoa(pub)}})
	require.Equal(t, http.StatusOK, code)
	require.Len(t, events(), 2)

	// Rejoin A: one subscriber.subscribed.
	code, _ = postForm(t, e.link(), url.Values{"action": {"preferences"}, "list": {itoa(a), itoa(b), itoa(pub)}})
	require.Equal(t, http.StatusOK, code)
	ev = events()
	require.Len(t, ev, 3)
	require.Equal(t, "subscriber.subscribed", ev[2]["type"])
	require.Equal(t, []any{float64(a)}, ev[2]["list_ids"])
}
