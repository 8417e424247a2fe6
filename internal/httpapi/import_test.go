package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
)

func TestImportCSV(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "imported"})
	l := decodeAs[api.List](t, res)
	res = e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "old@example.com", "name": "Old", "status": "confirmed",
		"attributes": map[string]any{"keep": "yes"}})
	old := decodeAs[api.Subscriber](t, res)

	csv := "email,name,status,plan\n" +
		"ada@example.com,Ada,confirmed,pro\n" + // line 2
		"not-an-address,X,,\n" + // line 3
		"OLD@example.com,,,gold\n" + // line 4: update; no name or status given
		"ada@EXAMPLE.com,Dup,,\n" + // line 5
		"bob@example.com,Bob,subscribed,\n" // line 6
	res = e.do(e.keyA, "POST", "/v1/subscribers/import?list_id="+itoa(l.Id), csv, "Content-Type", "text/csv")
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	out := decodeAs[api.ImportResult](t, res)
	require.EqualValues(t, 1, out.Inserted)
	require.EqualValues(t, 1, out.Updated)
	require.Len(t, out.Rejected, 3)
	require.Equal(t, []int{3, 5, 6}, []int{out.Rejected[0].Line, out.Rejected[1].Line, out.Rejected[2].Line})
	require.Contains(t, out.Rejected[1].Reason, "duplicate of line 2")

	res = e.do(e.keyA, "GET", "/v1/subscribers/"+itoa(old.Id), nil)
	got := decodeAs[api.Subscriber](t, res)
	require.Equal(t, "Old", got.Name, "no name column value keeps the name")
	require.Equal(t, api.SubscriberStatus("confirmed"), got.Status, "no status keeps the status")
	require.Equal(t, "OLD@example.com", got.Email)
	require.Equal(t, map[string]any{"keep": "yes", "plan": "gold"}, map[string]any(got.Attributes))

	res = e.do(e.keyA, "GET", "/v1/lists/"+itoa(l.Id), nil)
	require.EqualValues(t, 2, decodeAs[api.List](t, res).MemberCount)
}

func TestImportJSON(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := `[{"email":"a@example.com","attributes":{"n":1}},{"email":"b@example.com","status":"confirmed"},{"email":5},{"email":"c@example.com","bogus":true}]`
	res := e.do(e.keyA, "POST", "/v1/subscribers/import", body)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	out := decodeAs[api.ImportResult](t, res)
	require.EqualValues(t, 2, out.Inserted)
	require.Len(t, out.Rejected, 2)
	require.Equal(t, 3, out.Rejected[0].Line)
	require.Equal(t, 4, out.Rejected[1].Line)

	res = e.do(e.keyA, "POST", "/v1/subscribers/import", body)
	require.EqualValues(t, 2, decodeAs[api.ImportResult](t, res).Updated, "a second import updates")

	res = e.do(e.keyA, "POST", "/v1/subscribers/import", `{"email":"a@example.com"}`)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	res = e.do(e.keyA, "POST", "/v1/subscribers/import", `[{"email":"a@example.com"`)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	res = e.do(e.keyA, "POST", "/v1/subscribers/import?list_id=777", `[]`)
	require.Equal(t, http.StatusNotFound, res.Status)
	res = e.do(e.keyA, "POST", "/v1/subscribers/import", "email\n", "Content-Type", "text/plain")
	require.Equal(t, http.StatusUnsupportedMediaType, res.Status)
	require.Equal(t, "application/json, text/csv", res.Header.Get("Accept"))
}

func TestBodyLimits(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.MaxBodyBytes = 64; c.ImportMaxBytes = 128 })
	res := e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": strings.Repeat("x", 100)})
	require.Equal(t, http.StatusRequestEntityTooLarge, res.Status)
	res = e.do(e.keyA, "POST", "/v1/subscribers/import", "email\n"+strings.Repeat("a@example.com\n", 20), "Content-Type", "text/csv")
	require.Equal(t, http.StatusRequestEntityTooLarge, res.Status)
	res = e.do(e.keyA, "POST", "/v1/subscribers/import", "email\n"+strings.Repeat("a@example.com\n", 5), "Content-Type", "text/csv")
	require.Equal(t, http.StatusOK, res.Status, "the import has its own, larger limit")
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.APIRatePerSecond = 0.001; c.APIRateBurst = 2 })
	for i := 0; i < 2; i++ {
		require.Equal(t, http.StatusOK, e.do(e.keyA, "GET", "/v1/lists", nil).Status)
	}
	res := e.do(e.keyA, "GET", "/v1/lists", nil)
	require.Equal(t, http.StatusTooManyRequests, res.Status)
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	require.Equal(t, http.StatusOK, e.do(e.keyB, "GET", "/v1/lists", nil).Status, "each key has its own bucket")
}

func TestCORS(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.CORSOrigins = []string{"https://dash.example.com"} })
	req := httptest.NewRequest("OPTIONS", "/v1/lists", nil)
	req.Header.Set("Origin", "https://dash.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "Authorization, Idempotency-Key, Content-Type")
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	require.Equal(t, "https://dash.example.com", rec.Header().Get("Access-Control-Allow-Origin"))
	// A fetch-based client of the event stream resumes with Last-Event-ID.
	req = httptest.NewRequest("OPTIONS", "/v1/events/stream", nil)
	req.Header.Set("Origin", "https://dash.example.com")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "Authorization, Last-Event-ID")
	rec = httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	require.Equal(t, "https://dash.example.com", rec.Header().Get("Access-Control-Allow-Origin"))
	res := e.do(e.keyA, "GET", "/v1/lists", nil, "Origin", "https://evil.example.com")
	require.Equal(t, http.StatusOK, res.Status)
	require.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))
}
