package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/sequence"
)

// TestOutOfRangeIDNamesItsIndex: a number too large for an id (2^63) is a 422 naming
// the field with its array indices (/steps/1/template_id, as every other step error
// names it; /list_ids/1), on every route whose body is decoded, and stores nothing.
func TestOutOfRangeIDNamesItsIndex(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	res := e.do(a, "POST", "/v1/templates", map[string]any{"name": "w", "subject": "Welcome", "text": "Hi"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	ok := fmt.Sprintf(`{"type":"send","template_id":%d,"from_email":"hello@example.com"}`, tpl.Id)
	huge := `{"type":"send","template_id":9223372036854775808,"from_email":"hello@example.com"}`
	seqBody := func(steps ...string) string {
		return `{"name":"w","trigger":{"type":"manual"},"steps":[` + strings.Join(steps, ",") + `]}`
	}
	res = e.do(a, "POST", "/v1/sequences", seqBody(ok))
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	seqPath := "/v1/sequences/" + itoa(decodeAs[api.Sequence](t, res).Id)

	for _, c := range []struct {
		method, path, body, pointer string
	}{
		{"POST", "/v1/sequences", seqBody(huge), "/steps/0/template_id"},
		{"POST", "/v1/sequences", seqBody(ok, `{"type":"wait","duration":"1d"}`, huge), "/steps/2/template_id"},
		{"PUT", seqPath, seqBody(ok, huge), "/steps/1/template_id"},
		{"POST", "/v1/campaigns", `{"name":"c","subject":"S","from_email":"a@example.com","text_template":"Hi","list_ids":[7,9223372036854775808]}`, "/list_ids/1"},
	} {
		res := e.do(a, c.method, c.path, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s %s: %s", c.method, c.path, res.Body)
		require.Equal(t, []string{c.pointer}, decodeAs[problem](t, res).pointers(), "%s %s: %s", c.method, c.path, res.Body)
	}
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM sequences) + (SELECT count(*) FROM campaigns WHERE kind = 'campaign')`).Scan(&n))
	require.Equal(t, 1, n, "only the first sequence")
}

// TestEventDataLimit: an enrollment's data and a tracked event's data are bounded
// alike (sequence.MaxEventDataBytes as JSON): at the limit both pass, one byte over
// both are 422 naming /data and change nothing.
func TestEventDataLimit(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	res := e.do(a, "POST", "/v1/templates", map[string]any{"name": "w", "subject": "Welcome", "text": "Hi"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	for _, email := range []string{"ada@example.com", "bob@example.com"} {
		res = e.do(a, "POST", "/v1/subscribers", map[string]any{"email": email, "status": "confirmed"})
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	}
	res = e.do(a, "POST", "/v1/sequences", map[string]any{"name": "w", "trigger": map[string]any{"type": "manual"},
		"steps": []any{map[string]any{"type": "send", "template_id": tpl.Id, "from_email": "hello@example.com"}}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	seqPath := "/v1/sequences/" + itoa(decodeAs[api.Sequence](t, res).Id)
	require.Equal(t, http.StatusOK, e.do(a, "POST", seqPath+"/activate", nil).Status)

	// data of exactly n bytes as JSON: {"x":"aaa…"}.
	data := func(n int) map[string]any { return map[string]any{"x": strings.Repeat("a", n-len(`{"x":""}`))} }
	rows := func() int {
		var n int
		require.NoError(t, e.pool.QueryRow(context.Background(),
			`SELECT (SELECT count(*) FROM sequence_enrollments) + (SELECT count(*) FROM track_events)`).Scan(&n))
		return n
	}
	limit := sequence.MaxEventDataBytes
	for _, c := range []struct {
		name, path string
		body       func(n int) map[string]any
	}{
		{"enroll", seqPath + "/enroll", func(n int) map[string]any { return map[string]any{"email": "ada@example.com", "data": data(n)} }},
		{"track", "/v1/track", func(n int) map[string]any {
			return map[string]any{"event_id": "e-" + itoa(int64(n)), "name": "x", "email": "bob@example.com", "data": data(n)}
		}},
	} {
		before := rows()
		res := e.do(a, "POST", c.path, c.body(limit+1))
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s at limit+1: %s", c.name, res.Body)
		require.Equal(t, []string{"/data"}, decodeAs[problem](t, res).pointers(), c.name)
		require.Equal(t, before, rows(), "%s over the limit stored something", c.name)
		res = e.do(a, "POST", c.path, c.body(limit))
		require.Equal(t, http.StatusOK, res.Status, "%s at the limit: %s", c.name, res.Body)
		require.Greater(t, rows(), before, c.name)
	}
}
