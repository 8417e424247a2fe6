package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

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
		map[string]any{"subscribers": 3, "senders": nil, "messages_per_day": nil})
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
		map[string]any{"subscribers": 5, "senders": nil, "messages_per_day": nil})
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
		map[string]any{"subscribers": nil, "senders": 1, "messages_per_day": nil})
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

// TestMessagesPerDayQuota: the operator sets messages_per_day like the other
// quotas; past it POST /v1/messages is 429 problem+json daily-quota-exceeded
// naming the quota, with Retry-After the seconds to the next UTC midnight (as
// retry_after says), and stores nothing; an item of a batch past it is answered
// 429 in its place; a retry of an accepted message is still answered; another
// account is not held.
func TestMessagesPerDayQuota(t *testing.T) {
	t.Parallel()
	e, op := operatorEnv(t)
	a := e.accountIDOf(e.keyA)
	res := e.do(op, http.MethodPut, "/operator/v1/accounts/"+itoa(a)+"/quotas",
		map[string]any{"subscribers": nil, "senders": nil, "messages_per_day": 2})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, int64(2), *decodeAs[api.OperatorAccount](t, res).Quotas.MessagesPerDay)
	msg := func(i int) map[string]any {
		return map[string]any{"to": "ada@example.com", "from": "shop@example.com", "subject": "Receipt " + itoa(int64(i)), "text": "Thanks"}
	}
	stored := func() int64 {
		var n int64
		require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM messages WHERE account_id = $1`, a).Scan(&n))
		return n
	}

	for i := range 2 {
		res := e.do(e.keyA, http.MethodPost, "/v1/messages", msg(i), "Idempotency-Key", "day-"+itoa(int64(i)))
		require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	}
	before := time.Now().UTC()
	res = e.do(e.keyA, http.MethodPost, "/v1/messages", msg(2), "Idempotency-Key", "day-2")
	require.Equal(t, http.StatusTooManyRequests, res.Status, "%s", res.Body)
	require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
	var p struct {
		quotaProblem
		RetryAfter int    `json:"retry_after"`
		ResetsAt   string `json:"resets_at"`
	}
	require.NoError(t, json.Unmarshal(res.Body, &p))
	require.Equal(t, quotaProblem{Type: "https://sendonce.dev/problems/daily-quota-exceeded", Quota: "messages_per_day", Limit: 2, Used: 2}, p.quotaProblem)
	midnight := before.Truncate(24 * time.Hour).Add(24 * time.Hour)
	require.Equal(t, midnight.Format(time.RFC3339), p.ResetsAt)
	require.Equal(t, strconv.Itoa(p.RetryAfter), res.Header.Get("Retry-After"))
	require.InDelta(t, midnight.Sub(before).Seconds(), p.RetryAfter, 5, "Retry-After counts to the next UTC midnight")
	require.EqualValues(t, 2, stored(), "nothing stored")

	res = e.do(e.keyA, http.MethodPost, "/v1/messages", msg(0), "Idempotency-Key", "day-0")
	require.Equal(t, http.StatusAccepted, res.Status, "a retry of an accepted message: %s", res.Body)
	require.Equal(t, "true", res.Header.Get("Idempotent-Replayed"))

	res = e.do(e.keyA, http.MethodPost, "/v1/messages/batch", map[string]any{"messages": []any{
		map[string]any{"idempotency_key": "day-1", "message": msg(1)},
		map[string]any{"idempotency_key": "day-3", "message": msg(3)}}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	out := decodeAs[api.MessageBatchResult](t, res)
	require.Equal(t, http.StatusAccepted, out.Results[0].Status, "the replayed item")
	require.Equal(t, http.StatusTooManyRequests, out.Results[1].Status, "the new item past the quota")
	require.Equal(t, "https://sendonce.dev/problems/daily-quota-exceeded", out.Results[1].Problem.Type)
	require.EqualValues(t, 2, stored())

	res = e.do(e.keyB, http.MethodPost, "/v1/messages", msg(9), "Idempotency-Key", "day-2")
	require.Equal(t, http.StatusAccepted, res.Status, "another account is not held: %s", res.Body)
}
