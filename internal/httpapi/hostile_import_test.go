package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestHostileImports walks the import the way TestHostileInputGenerated walks the
// API: in a JSON import, every string of a row (member names of attributes
// included) gets each hostile value; in a CSV import, every cell and header cell.
// An import reports bad rows by line instead of failing whole, so the answer is
// either a 4xx problem or a 200 that rejects the hostile line and imports the clean
// one; nothing hostile is ever stored.
func TestHostileImports(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const clean = "clean@example.com"
	checkImport := func(what string, res response, hostileLine int) {
		t.Helper()
		require.Less(t, res.Status, 500, "%s: %s", what, res.Body)
		if res.Status >= 400 {
			requireProblem4xx(t, res, what)
			return
		}
		out := decodeAs[api.ImportResult](t, res)
		var lines []int
		for _, r := range out.Rejected {
			lines = append(lines, r.Line)
		}
		require.Contains(t, lines, hostileLine, "%s: the hostile line was not rejected: %s", what, res.Body)
		require.EqualValues(t, 1, out.Inserted+out.Updated, "%s: only the clean row is imported: %s", what, res.Body)
	}
	sent := 0

	// JSON: row 1 is hostile, row 2 clean.
	row := map[string]any{"email": "row@example.com", "name": "n", "status": "confirmed", "attributes": map[string]any{"plan": "pro"}}
	slots := []slot{{path: []any{0, "email"}}, {path: []any{0, "name"}}, {path: []any{0, "status"}},
		{path: []any{0, "attributes", "plan"}, free: true}, {path: []any{0, "attributes", "plan"}, key: true}}
	base := []any{row, map[string]any{"email": clean}}
	for _, sl := range slots {
		for _, h := range hostileLiterals {
			if (sl.key || sl.free) && !h.textOnly || sl.key && !strings.HasPrefix(h.lit, `"`) {
				continue
			}
			res := send(e, "POST", "/v1/subscribers/import", hostileBody(t, base, sl, h.lit))
			sent++
			checkImport(fmt.Sprintf("JSON import %s = %s", sl, h.name), res, 1)
		}
	}

	// CSV: line 2 is hostile (one cell at a time), line 3 clean. Invalid bytes are
	// sent with charset=utf-8: without a charset they are read as Windows-1252.
	cells := []string{"row@example.com", "n", "confirmed", "pro", `{"k":"v"}`}
	for col := range cells {
		for _, h := range []struct{ name, cell string }{{"NUL", "a\x00b"}, {"invalid UTF-8", "caf\xe9"},
			{"UTF-8-encoded surrogate", "\xed\xa0\x80"}, {"1 MB", oneMB}, {"JSON NUL", `{"k":"\u0000"}`},
			{"JSON surrogate", `{"k\ud800":"v"}`}} {
			if col != 4 && strings.HasPrefix(h.name, "JSON") {
				continue // JSON text outside the attributes column is plain text
			}
			row := append([]string(nil), cells...)
			row[col] = `"` + strings.ReplaceAll(h.cell, `"`, `""`) + `"`
			doc := "email,name,status,plan,attributes\n" + strings.Join(row, ",") + "\n" + clean + ",,,,\n"
			res := send(e, "POST", "/v1/subscribers/import", []byte(doc), "Content-Type", "text/csv; charset=utf-8")
			sent++
			checkImport(fmt.Sprintf("CSV import column %d = %s", col+1, h.name), res, 2)
		}
	}
	// Hostile header cells fail the whole import; so does an unknown charset (415).
	for _, header := range []string{"email,na\x00me", "email,caf\xe9", "email;\xed\xa0\x80"} {
		res := send(e, "POST", "/v1/subscribers/import", []byte(header+"\n"+clean+",x\n"), "Content-Type", "text/csv; charset=utf-8")
		sent++
		requireProblem4xx(t, res, fmt.Sprintf("CSV header %q", header))
	}
	res := send(e, "POST", "/v1/subscribers/import", []byte("email\n"+clean+"\n"), "Content-Type", "text/csv; charset=ebcdic")
	requireProblem4xx(t, res, "unknown charset")
	require.Equal(t, http.StatusUnsupportedMediaType, res.Status)
	t.Logf("hostile imports: %d", sent)

	// Nothing hostile was stored: the only subscriber is the clean one.
	var n int
	var emails string
	require.NoError(t, e.pool.QueryRow(t.Context(), `SELECT count(*), string_agg(email, ',') FROM subscribers`).Scan(&n, &emails))
	require.Equal(t, 1, n, emails)
	require.Equal(t, clean, emails)
	res = e.do(e.keyA, "GET", "/v1/subscribers", nil)
	require.Equal(t, http.StatusOK, res.Status, "still serving")
}
