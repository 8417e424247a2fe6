package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestImportThroughput measures one 100,000-row CSV import over HTTP against psql's
// \copy of the same file into a plain table on the same server. It reports and
// asserts only correctness, never timing. Skipped unless SENDONCE_IMPORT_BENCH=1:
//
//	SENDONCE_IMPORT_BENCH=1 go test -run TestImportThroughput -v ./internal/httpapi/
func TestImportThroughput(t *testing.T) {
	if os.Getenv("SENDONCE_IMPORT_BENCH") != "1" {
		t.Skip("set SENDONCE_IMPORT_BENCH=1 to measure the 100,000-row import")
	}
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql not found")
	}
	const rows = 100_000
	e := setup(t)
	var b strings.Builder
	b.WriteString("email,name,status,plan\n")
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&b, "user%06d@example.com,User %d,confirmed,plan%d\n", i, i, i%7)
	}
	csv := b.String()
	file := filepath.Join(t.TempDir(), "subscribers.csv")
	require.NoError(t, os.WriteFile(file, []byte(csv), 0o644))

	srv := httptest.NewServer(e.handler)
	defer srv.Close()
	req, err := http.NewRequest("POST", srv.URL+"/v1/subscribers/import", strings.NewReader(csv))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.keyA)
	req.Header.Set("Content-Type", "text/csv")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	apiTime := time.Since(start)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out api.ImportResult
	require.NoError(t, jsonDecode(resp, &out))
	require.EqualValues(t, rows, out.Inserted)
	require.Empty(t, out.Rejected)

	url := e.pool.Config().ConnString()
	mk := exec.Command(psql, url, "-v", "ON_ERROR_STOP=1", "-qc", "CREATE TABLE bench_copy (email text, name text, status text, plan text)")
	outb, err := mk.CombinedOutput()
	require.NoError(t, err, "%s", outb)
	cp := exec.Command(psql, url, "-v", "ON_ERROR_STOP=1", "-qc", `\copy bench_copy FROM '`+file+`' WITH (FORMAT csv, HEADER true)`)
	start = time.Now()
	outb, err = cp.CombinedOutput()
	copyTime := time.Since(start)
	require.NoError(t, err, "%s", outb)

	// The database's share: the same rows upserted from the plain table into a fresh
	// account's subscribers, with the unique and prefix indexes the import maintains.
	up := exec.Command(psql, url, "-v", "ON_ERROR_STOP=1", "-qc",
		`INSERT INTO subscribers (account_id, email, email_lower, name, status, attributes)
		 SELECT (SELECT max(id) FROM accounts), email, lower(email), name, status, jsonb_build_object('plan', plan)
		 FROM bench_copy ORDER BY lower(email)
		 ON CONFLICT (account_id, email_lower) DO UPDATE SET name = excluded.name`)
	start = time.Now()
	outb, err = up.CombinedOutput()
	upsertTime := time.Since(start)
	require.NoError(t, err, "%s", outb)

	t.Logf("API import of %d rows (%d bytes) in one request: %v (%.0f rows/s)", rows, len(csv), apiTime, rows/apiTime.Seconds())
	t.Logf("psql \\copy of the same file into a plain table: %v (%.0f rows/s)", copyTime, rows/copyTime.Seconds())
	t.Logf("psql upsert of those rows into subscribers (the database's share): %v", upsertTime)
	t.Logf("ratio API / \\copy: %.1fx; API / (\\copy + upsert): %.1fx", apiTime.Seconds()/copyTime.Seconds(),
		apiTime.Seconds()/(copyTime+upsertTime).Seconds())
}
