package httpapi_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/idempotency"
)

func TestIdempotencyReplay(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := map[string]any{"name": "weekly"}
	first := e.do(e.keyA, "POST", "/v1/lists", body, "Idempotency-Key", "k-1")
	require.Equal(t, http.StatusCreated, first.Status)
	require.Empty(t, first.Header.Get("Idempotent-Replayed"))

	again := e.do(e.keyA, "POST", "/v1/lists", body, "Idempotency-Key", `"k-1"`)
	require.Equal(t, http.StatusCreated, again.Status)
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	require.JSONEq(t, string(first.Body), string(again.Body))

	res := e.do(e.keyA, "GET", "/v1/lists", nil)
	require.Len(t, decodeAs[api.ListPage](t, res).Data, 1, "the replay created nothing")

	// An error response is stored and replayed too (Stripe: "including 500 errors").
	dup := e.do(e.keyA, "POST", "/v1/lists", body, "Idempotency-Key", "k-2")
	require.Equal(t, http.StatusConflict, dup.Status)
	dup2 := e.do(e.keyA, "POST", "/v1/lists", body, "Idempotency-Key", "k-2")
	require.Equal(t, http.StatusConflict, dup2.Status)
	require.Equal(t, "true", dup2.Header.Get("Idempotent-Replayed"))

	// Keys are per account: B's k-1 is a new request.
	resB := e.do(e.keyB, "POST", "/v1/lists", body, "Idempotency-Key", "k-1")
	require.Equal(t, http.StatusCreated, resB.Status)
	require.Empty(t, resB.Header.Get("Idempotent-Replayed"))
}

func TestIdempotencyDifferentBody(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "one"}, "Idempotency-Key", "k")
	require.Equal(t, http.StatusCreated, res.Status)
	res = e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "two"}, "Idempotency-Key", "k")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, decodeAs[problem](t, res).Type, "idempotency_key_reused")
	res = e.do(e.keyA, "GET", "/v1/lists", nil)
	require.Len(t, decodeAs[api.ListPage](t, res).Data, 1)
}

// TestIdempotencyInProgress: a key claimed by a request that has not finished answers
// 409 and runs nothing; once the first stores its response, retries replay it.
func TestIdempotencyInProgress(t *testing.T) {
	t.Parallel()
	e := setup(t)
	// Claim the key as a running request would, with this very request's hash.
	res := e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "x"}, "Idempotency-Key", "probe")
	require.Equal(t, http.StatusCreated, res.Status)
	ctx := context.Background()
	var accountID int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT account_id FROM idempotency_keys WHERE key = 'probe'`).Scan(&accountID))
	_, err := e.pool.Exec(ctx, `UPDATE idempotency_keys SET response_status = NULL, response_body = NULL WHERE key = 'probe'`)
	require.NoError(t, err)

	res = e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "x"}, "Idempotency-Key", "probe")
	require.Equal(t, http.StatusConflict, res.Status)
	require.Contains(t, decodeAs[problem](t, res).Type, "idempotency_in_progress")

	require.NoError(t, idempotency.NewStore(e.pool).Save(ctx, accountID, "probe", http.StatusCreated,
		[]byte(`{"id":1,"name":"x","description":"","member_count":0,"optin":"single","public":false,"language":"",`+
			`"optin_from_email":"","optin_from_name":"","optin_template_id":null,"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`)))
	res = e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "x"}, "Idempotency-Key", "probe")
	require.Equal(t, http.StatusCreated, res.Status)
	require.Equal(t, "true", res.Header.Get("Idempotent-Replayed"))
}

// TestIdempotencyExpiry: a key older than 24 hours is a new request.
func TestIdempotencyExpiry(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "one"}, "Idempotency-Key", "old")
	require.Equal(t, http.StatusCreated, res.Status)
	_, err := e.pool.Exec(context.Background(), `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`)
	require.NoError(t, err)
	res = e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "two"}, "Idempotency-Key", "old")
	require.Equal(t, http.StatusCreated, res.Status)
	require.Empty(t, res.Header.Get("Idempotent-Replayed"))
}

// TestIdempotencyValidationNotStored: a request refused by the spec is not stored,
// so the fixed request can reuse the key.
func TestIdempotencyValidationNotStored(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/lists", map[string]any{"nam": "typo"}, "Idempotency-Key", "v")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	res = e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "fixed"}, "Idempotency-Key", "v")
	require.Equal(t, http.StatusCreated, res.Status)
}

// TestIdempotencyHandlerValidationNotStored: a request the spec accepts but the
// handler refuses (a display name in the address) is not stored either, Stripe's
// "results are saved only once execution began": the corrected request succeeds under
// the same key, and is then replayed.
func TestIdempotencyHandlerValidationNotStored(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "Ada <ada@example.com>"}, "Idempotency-Key", "h")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Contains(t, decodeAs[problem](t, res).Type, "invalid")
	res = e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "ada@example.com"}, "Idempotency-Key", "h")
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	require.Empty(t, res.Header.Get("Idempotent-Replayed"))
	again := e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "ada@example.com"}, "Idempotency-Key", "h")
	require.Equal(t, http.StatusCreated, again.Status)
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	require.JSONEq(t, string(res.Body), string(again.Body))

	// A state-dependent refusal changes nothing either: a campaign whose list does
	// not exist is 422, and once the list exists the same key creates it.
	campaign := map[string]any{"name": "c", "subject": "s", "from_email": "news@example.com", "list_ids": []int64{999999}}
	res = e.do(e.keyA, "POST", "/v1/campaigns", campaign, "Idempotency-Key", "c")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	list := decodeAs[api.List](t, e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "n"}))
	campaign["list_ids"] = []int64{list.Id}
	res = e.do(e.keyA, "POST", "/v1/campaigns", campaign, "Idempotency-Key", "c")
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
}

// TestIdempotencyConcurrent fires the same keyed request at once from many clients:
// exactly one runs; the others get 409 (still running) or the replay, and one list exists.
func TestIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const n = 8
	results := make(chan response, n)
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = httptest.NewRequest("POST", "/v1/lists", strings.NewReader(`{"name":"race"}`))
		reqs[i].Header.Set("Content-Type", "application/json")
		reqs[i].Header.Set("Authorization", "Bearer "+e.keyA)
		reqs[i].Header.Set("Idempotency-Key", "race")
	}
	var wg sync.WaitGroup
	for _, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			results <- response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
		}()
	}
	wg.Wait()
	close(results)
	fresh := 0
	for res := range results {
		checkResponse(t, reqs[0], res)
		switch {
		case res.Status == http.StatusCreated && res.Header.Get("Idempotent-Replayed") == "":
			fresh++
		case res.Status == http.StatusCreated:
		case res.Status == http.StatusConflict:
			require.Contains(t, decodeAs[problem](t, res).Type, "idempotency_in_progress")
		default:
			t.Fatalf("unexpected %d: %s", res.Status, res.Body)
		}
	}
	require.Equal(t, 1, fresh)
	res := e.do(e.keyA, "GET", "/v1/lists", nil)
	require.Len(t, decodeAs[api.ListPage](t, res).Data, 1)
}

// TestIdempotencyWebhookEndpoints: creating and rotating a webhook endpoint honour
// Idempotency-Key as openapi.yaml says: a retry replays the first answer, the same
// credentials included, and makes or rotates nothing more.
func TestIdempotencyWebhookEndpoints(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := map[string]any{"source": "standard", "name": "crm"}
	first := e.do(e.keyA, "POST", "/v1/webhook-endpoints", body, "Idempotency-Key", "ep")
	require.Equal(t, http.StatusCreated, first.Status, "%s", first.Body)
	again := e.do(e.keyA, "POST", "/v1/webhook-endpoints", body, "Idempotency-Key", "ep")
	require.Equal(t, http.StatusCreated, again.Status)
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	require.JSONEq(t, string(first.Body), string(again.Body))
	page := decodeAs[struct{ Data []map[string]any }](t, e.do(e.keyA, "GET", "/v1/webhook-endpoints", nil))
	require.Len(t, page.Data, 1)

	id := decodeAs[struct{ ID int64 }](t, first).ID
	path := "/v1/webhook-endpoints/" + itoa(id) + "/rotate"
	rot := e.do(e.keyA, "POST", path, map[string]any{"grace_seconds": 0}, "Idempotency-Key", "rot")
	require.Equal(t, http.StatusOK, rot.Status, "%s", rot.Body)
	rot2 := e.do(e.keyA, "POST", path, map[string]any{"grace_seconds": 0}, "Idempotency-Key", "rot")
	require.Equal(t, "true", rot2.Header.Get("Idempotent-Replayed"))
	require.JSONEq(t, string(rot.Body), string(rot2.Body), "the same new secret, not a second rotation")
}

// TestIdempotencyFingerprintIsCanonicalJSON: one rule for every route — the route
// and the body's canonical JSON (keys sorted, insignificant whitespace removed,
// numbers as written). The response store's routes hashed the raw bytes and
// /v1/messages the parsed request: a reordered body was 422 on the first and a
// replay on the second, and a reordered "data" object 422 on the second too.
func TestIdempotencyFingerprintIsCanonicalJSON(t *testing.T) {
	t.Parallel()
	e := setup(t)
	first := e.do(e.keyA, "POST", "/v1/lists", `{"name":"weekly","description":"news","language":"en"}`, "Idempotency-Key", "l-1")
	require.Equal(t, http.StatusCreated, first.Status)
	again := e.do(e.keyA, "POST", "/v1/lists", "{\n  \"language\": \"en\",\n  \"description\": \"news\",\n  \"name\": \"weekly\"\n}\n",
		"Idempotency-Key", "l-1")
	require.Equal(t, http.StatusCreated, again.Status, "%s", again.Body)
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"), "reordered keys and whitespace are the same request")
	other := e.do(e.keyA, "POST", "/v1/lists", `{"language":"en","description":"news!","name":"weekly"}`, "Idempotency-Key", "l-1")
	require.Equal(t, http.StatusUnprocessableEntity, other.Status, "another value is another request")

	msg := `{"to":"ada@example.com","from":"shop@example.com","subject":"Receipt","text":"Hi","data":{"order":"A-1","total":10.50}}`
	first = e.do(e.keyA, "POST", "/v1/messages", msg, "Idempotency-Key", "m-1")
	require.Equal(t, http.StatusAccepted, first.Status, "%s", first.Body)
	again = e.do(e.keyA, "POST", "/v1/messages",
		`{ "data": {"total": 10.50, "order": "A-1"}, "text": "Hi", "subject": "Receipt", "from": "shop@example.com", "to": "ada@example.com" }`,
		"Idempotency-Key", "m-1")
	require.Equal(t, http.StatusAccepted, again.Status, "%s", again.Body)
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"), "reordered keys and whitespace are the same message")
	other = e.do(e.keyA, "POST", "/v1/messages",
		`{"to":"ada@example.com","from":"shop@example.com","subject":"Receipt","text":"Hi","data":{"order":"A-1","total":10.5}}`,
		"Idempotency-Key", "m-1")
	require.Equal(t, http.StatusUnprocessableEntity, other.Status, "a number written otherwise is another request: %s", other.Body)
}

// TestIdempotencyKeyOfThePreviousRule: a key claimed by a replica of the previous
// version carries the SHA-256 of the request URI and the raw body; a byte-identical
// retry within the keys' 24 hours is still a replay, not 422.
func TestIdempotencyKeyOfThePreviousRule(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := `{"name":"weekly"}`
	first := e.do(e.keyA, "POST", "/v1/lists", body, "Idempotency-Key", "old-rule")
	require.Equal(t, http.StatusCreated, first.Status)
	legacy := sha256.Sum256([]byte("POST /v1/lists\n" + body))
	_, err := e.pool.Exec(context.Background(), `UPDATE idempotency_keys SET request_hash = $1 WHERE key = 'old-rule'`, legacy[:])
	require.NoError(t, err)
	again := e.do(e.keyA, "POST", "/v1/lists", body, "Idempotency-Key", "old-rule")
	require.Equal(t, http.StatusCreated, again.Status, "%s", again.Body)
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
}
