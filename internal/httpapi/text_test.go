package httpapi_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestUnstorableTextIs422 replays each NUL / invalid UTF-8 / surrogate defect that
// answered 500: every one is a 422 naming the field, and nothing is stored.
func TestUnstorableTextIs422(t *testing.T) {
	t.Parallel()
	e := setup(t)
	f := makeFixtures(t, e)
	before := tableCounts(t, e)
	for _, tc := range []struct {
		method, path, body, pointer string
	}{
		// The curl: {"name":"a\u0000b"} on POST /v1/lists.
		{"POST", "/v1/lists", `{"name":"a\u0000b"}`, "/name"},
		{"POST", "/v1/lists", `{"name":"ok","description":"a\u0000b"}`, "/description"},
		{"PATCH", "/v1/lists/" + itoa(f.list), `{"description":"\ud800"}`, "/description"},
		{"POST", "/v1/subscribers", `{"email":"n@example.com","name":"a\u0000b"}`, "/name"},
		{"POST", "/v1/subscribers", `{"email":"n@example.com","attributes":{"plan":"a\u0000b"}}`, "/attributes/plan"},
		{"POST", "/v1/subscribers", `{"email":"n@example.com","attributes":{"a\u0000":"x"}}`, "/attributes/a\uFFFD"},
		{"POST", "/v1/subscribers", `{"email":"n@example.com","attributes":{"deep":[{"x":"\udc00"}]}}`, "/attributes/deep/0/x"},
		{"PATCH", "/v1/subscribers/" + itoa(f.subscriber), "{\"name\":\"caf\xe9\"}", "/name"},
		{"POST", "/v1/campaigns", `{"name":"c","subject":"s\u0000","from_email":"a@example.com","text_template":"t"}`, "/subject"},
		{"POST", "/v1/campaigns", `{"name":"c","subject":"s","from_email":"a@example.com","text_template":"t\u0000"}`, "/text_template"},
		{"POST", "/v1/campaigns", `{"name":"c","subject":"s","from_email":"a@example.com","html_template":"<p>\ud800</p>"}`, "/html_template"},
		{"PATCH", "/v1/campaigns/" + itoa(f.campaign), `{"from_name":"a\u0000b"}`, "/from_name"},
		{"PATCH", "/v1/campaigns/" + itoa(f.campaign), "{\"name\":\"\xff\"}", "/name"},
		{"POST", "/v1/suppressions", `{"email":"s@example.com","source":"crm\u0000"}`, "/source"},
		{"POST", "/v1/webhook-endpoints", `{"source":"standard","name":"a\u0000b"}`, "/name"},
	} {
		res := send(e, tc.method, tc.path, []byte(tc.body))
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s %s %s: %s", tc.method, tc.path, tc.body, res.Body)
		require.Contains(t, decodeAs[problem](t, res).pointers(), tc.pointer, "%s %s: %s", tc.method, tc.path, res.Body)
	}
	// Query parameters, path parameters and a crafted cursor.
	for _, tc := range []struct{ path, pointer string }{
		{"/v1/subscribers?email=%00", "/email"},
		{"/v1/subscribers?email=caf%E9", "/email"},
		{"/v1/suppressions/a%00b@example.com", "/email"},
		{"/v1/suppressions?cursor=" + craftedCursor(t, e, "suppressions", "a\x00b"), "/cursor"},
		{"/v1/suppressions?cursor=" + craftedCursor(t, e, "suppressions", "caf\xe9"), "/cursor"},
	} {
		method := "GET"
		if strings.HasPrefix(tc.path, "/v1/suppressions/") {
			method = "DELETE"
		}
		res := send(e, method, tc.path, nil)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s: %s", tc.path, res.Body)
		require.Contains(t, decodeAs[problem](t, res).pointers(), tc.pointer, tc.path)
	}
	require.Equal(t, before, tableCounts(t, e))
	// Valid text outside ASCII is, of course, fine.
	res := e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "Café ☕ 𝄞", "description": "Zoë"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	require.Equal(t, "Café ☕ 𝄞", decodeAs[api.List](t, res).Name)
}

// craftedCursor is a cursor of the right account and listing whose key is s.
func craftedCursor(t *testing.T, e *env, listing, key string) string {
	t.Helper()
	var account int64
	require.NoError(t, e.pool.QueryRow(t.Context(), `SELECT account_id FROM lists ORDER BY id LIMIT 1`).Scan(&account))
	raw := `{"a":` + itoa(account) + `,"l":"` + listing + `","k":"` + strings.ReplaceAll(key, "\x00", `\u0000`) + `"}`
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// TestLatin1CSVImport is the Excel export: printf 'email,name\nx@example.com,caf\xe9\n'
// with Content-Type: text/csv failed the whole import; it is Windows-1252 and imports.
func TestLatin1CSVImport(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := send(e, "POST", "/v1/subscribers/import", []byte("email,name\nx@example.com,caf\xe9\n"), "Content-Type", "text/csv")
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.EqualValues(t, 1, decodeAs[api.ImportResult](t, res).Inserted)
	// Semicolons, ISO-8859-1 labelled, € at 0x80 (Windows-1252, as browsers read Latin-1).
	res = send(e, "POST", "/v1/subscribers/import", []byte("email;name;price\r\ny@example.com;Ren\xe9e;5\x80\r\n"),
		"Content-Type", "text/csv; charset=ISO-8859-1")
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	res = e.do(e.keyA, "GET", "/v1/subscribers?email=x", nil)
	require.Equal(t, "café", decodeAs[api.SubscriberPage](t, res).Data[0].Name)
	res = e.do(e.keyA, "GET", "/v1/subscribers?email=y", nil)
	got := decodeAs[api.SubscriberPage](t, res).Data[0]
	require.Equal(t, "Renée", got.Name)
	require.Equal(t, "5€", got.Attributes["price"])
	// Declared UTF-8 and not UTF-8: that line is rejected, naming the column.
	res = send(e, "POST", "/v1/subscribers/import", []byte("email,name\nz@example.com,caf\xe9\n"), "Content-Type", "text/csv; charset=utf-8")
	require.Equal(t, http.StatusOK, res.Status)
	out := decodeAs[api.ImportResult](t, res)
	require.Len(t, out.Rejected, 1)
	require.Equal(t, 2, out.Rejected[0].Line)
	require.Contains(t, out.Rejected[0].Reason, `"name" holds bytes that are not valid UTF-8`)
}

// TestJSONImportRefusesUnstorableRows: NUL, surrogates and invalid UTF-8 in a JSON
// import reject their row with the line and pointer; the other rows import.
func TestJSONImportRefusesUnstorableRows(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := "[{\"email\":\"a@example.com\",\"name\":\"a\\u0000\"},{\"email\":\"b@example.com\",\"attributes\":{\"k\":\"\\ud800\"}}," +
		"{\"email\":\"c@example.com\",\"name\":\"caf\xe9\"},{\"email\":\"d@example.com\",\"name\":\"fine\"}]"
	res := send(e, "POST", "/v1/subscribers/import", []byte(body))
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	out := decodeAs[api.ImportResult](t, res)
	require.EqualValues(t, 1, out.Inserted)
	require.Len(t, out.Rejected, 3)
	require.Equal(t, 1, out.Rejected[0].Line)
	require.Contains(t, out.Rejected[0].Reason, "/name contains a NUL")
	require.Contains(t, out.Rejected[1].Reason, "/attributes/k contains an unpaired")
	require.Contains(t, out.Rejected[2].Reason, "/name is not valid UTF-8")
}

// TestMalformedAPIKeysAre401: a key cut mid-character at its 15th byte (the prefix
// slice), NUL, invalid UTF-8, absurd lengths: all 401, never 500.
func TestMalformedAPIKeysAre401(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, key := range []string{"so_aaaaaaaaaaaéaaaaaaaa", "so_aaaaaaaaaaaaaéaaaaaaa", "so_aaaaaaaaaaaa\x00aaaaaaaa",
		"so_aaaaaaaaaaaa\xffaaaaaaaa", "so_" + strings.Repeat("a", 1<<16), "so_", "so_AAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		e.keyA + "é", strings.ToUpper(e.keyA), "\xed\xa0\x80"} {
		for _, path := range []string{"/v1/account", "/v1/lists"} {
			res := send(&env{t: t, pool: e.pool, handler: e.handler, keyA: key}, "GET", path, nil)
			require.Equal(t, http.StatusUnauthorized, res.Status, "%.40q on %s: %s", key, path, res.Body)
			require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
		}
	}
	res := e.do(e.keyA, "GET", "/v1/account", nil)
	require.Equal(t, http.StatusOK, res.Status)
}

// TestSignedWebhookWithUnstorableFieldsIs422: a correctly signed delivery whose
// data.email or data.job_id holds NUL (a 500 the provider retried forever) is a 422
// naming the field, and changes nothing.
func TestSignedWebhookWithUnstorableFieldsIs422(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	status, created := e.api(t, http.MethodPost, "/v1/webhook-endpoints", map[string]any{"source": "standard", "name": "crm"})
	require.Equal(t, http.StatusCreated, status)
	secret := created["credentials"].(map[string]any)["secret"].(string)
	path := created["path"].(string)
	for i, tc := range []struct{ body, pointer string }{
		{`{"type":"subscriber.complained","data":{"email":"ada\u0000@example.com","job_id":"job-ada"}}`, "/data/email"},
		{`{"type":"subscriber.complained","data":{"email":"ada@example.com","job_id":"job\u0000"}}`, "/data/job_id"},
		{"{\"type\":\"subscriber.complained\",\"data\":{\"email\":\"ada@example.com\",\"job_id\":\"job\xff\"}}", "/data/job_id"},
		{`{"type":"subscriber.complained","data":{"email":"ada@example.com","provider_message_id":"\ud800"}}`, "/data/provider_message_id"},
	} {
		status, prob := deliverSigned(t, e.url+path, secret, "evt-"+itoa(int64(i)), time.Now(), []byte(tc.body))
		require.Equal(t, http.StatusUnprocessableEntity, status, "%s: %v", tc.body, prob)
		require.Equal(t, tc.pointer, prob["errors"].([]any)[0].(map[string]any)["pointer"])
	}
	reason, _ := e.suppressed(t)
	require.Empty(t, reason, "nothing applied")
	var events int
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM webhook_events`).Scan(&events))
	require.Zero(t, events)
}
