package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// quotaProblem is the body of a quota refusal.
type quotaProblem struct {
	Type  string `json:"type"`
	Quota string `json:"quota"`
	Limit int64  `json:"limit"`
	Used  int64  `json:"used"`
}

// TestSubscriberQuota: past the subscribers quota a create is 403 naming the
// quota, its limit and what is used; an import takes new addresses up to the room
// left and reports the rest as rejected rows (updates of known addresses never
// count); concurrent creates never overshoot; another account is not held.
func TestSubscriberQuota(t *testing.T) {
	t.Parallel()
	e, op := operatorEnv(t)
	a := e.accountIDOf(e.keyA)
	res := e.do(op, http.MethodPut, "/operator/v1/accounts/"+itoa(a)+"/quotas",
		map[string]any{"subscribers": 3, "senders": nil})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

	res = e.do(e.keyA, http.MethodPost, "/v1/subscribers", map[string]any{"email": "one@example.com"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	// An import of one known and three new addresses: two fit, the last new is rejected.
	csv := "email,name\none@example.com,One\ntwo@example.com,Two\nthree@example.com,Three\nfour@example.com,Four\n"
	res = e.do(e.keyA, http.MethodPost, "/v1/subscribers/import", csv, "Content-Type", "text/csv")
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	out := decodeAs[api.ImportResult](t, res)
	require.EqualValues(t, 2, out.Inserted)
	require.EqualValues(t, 1, out.Updated)
	require.Len(t, out.Rejected, 1)
	require.Equal(t, 5, out.Rejected[0].Line)
	require.Equal(t, "four@example.com", out.Rejected[0].Email)
	require.Contains(t, out.Rejected[0].Reason, "quota subscribers")

	res = e.do(e.keyA, http.MethodPost, "/v1/subscribers", map[string]any{"email": "five@example.com"})
	require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
	var p quotaProblem
	require.NoError(t, json.Unmarshal(res.Body, &p))
	require.Equal(t, quotaProblem{Type: "https://sendonce.dev/problems/quota-exceeded", Quota: "subscribers", Limit: 3, Used: 3}, p)
	res = e.do(e.keyB, http.MethodPost, "/v1/subscribers", map[string]any{"email": "five@example.com"})
	require.Equal(t, http.StatusCreated, res.Status, "another account is not held: %s", res.Body)

	// Raised by two, then ten creates at once: exactly two succeed.
	res = e.do(op, http.MethodPut, "/operator/v1/accounts/"+itoa(a)+"/quotas",
		map[string]any{"subscribers": 5, "senders": nil})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var wg sync.WaitGroup
	statuses := make([]int, 10)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.do(e.keyA, http.MethodPost, "/v1/subscribers",
				map[string]any{"email": "race" + itoa(int64(i)) + "@example.com"}).Status
		}()
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		require.Contains(t, []int{http.StatusCreated, http.StatusForbidden}, s)
		if s == http.StatusCreated {
			created++
		}
	}
	require.Equal(t, 2, created)
	var n int64
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM subscribers WHERE account_id = $1`, a).Scan(&n))
	require.EqualValues(t, 5, n)
}

// TestSenderQuota: past the senders quota a create is 403 naming it.
func TestSenderQuota(t *testing.T) {
	t.Parallel()
	e, op := operatorEnv(t)
	a := e.accountIDOf(e.keyA)
	res := e.do(op, http.MethodPut, "/operator/v1/accounts/"+itoa(a)+"/quotas",
		map[string]any{"subscribers": nil, "senders": 1})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	body := func(name string) map[string]any {
		return map[string]any{"name": name, "type": "postmark", "settings": map[string]any{"message_stream": "broadcast"},
			"credentials": map[string]any{"server_token": "pm-secret-token-aaaa-bbbb-1234"}}
	}
	res = e.do(e.keyA, http.MethodPost, "/v1/senders", body("first"))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	res = e.do(e.keyA, http.MethodPost, "/v1/senders", body("second"))
	require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
	var p quotaProblem
	require.NoError(t, json.Unmarshal(res.Body, &p))
	require.Equal(t, quotaProblem{Type: "https://sendonce.dev/problems/quota-exceeded", Quota: "senders", Limit: 1, Used: 1}, p)
}
