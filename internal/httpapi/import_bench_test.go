package httpapi_test

import (
	"context"
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
	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/httpapi/httpapitest"
)

// BenchmarkImport imports a 100,000-row CSV over HTTP, one request per iteration,
// each into a fresh account, and reports rows/s. When psql is on PATH it also
// reports psql's \copy of the same file into a plain table on the same server
// (copy_rows/s), the floor the import is compared with:
//
//	go test -run '^$' -bench BenchmarkImport -benchtime 3x ./internal/httpapi/
func BenchmarkImport(b *testing.B) {
	const rows = 100_000
	pool := dbtest.New(b)
	accounts := account.NewService(pool)
	cfg := config.Default()
	cfg.APIRatePerSecond = 0
	srv := httptest.NewServer(httpapitest.New(b, pool, cfg))
	defer srv.Close()
	var sb strings.Builder
	sb.WriteString("email,name,status,plan\n")
	for i := range rows {
		fmt.Fprintf(&sb, "user%06d@example.com,User %d,confirmed,plan%d\n", i, i, i%7)
	}
	csv := sb.String()

	var spent time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		_, key, err := accounts.Create(context.Background(), fmt.Sprintf("import %d", i))
		require.NoError(b, err)
		req, err := http.NewRequest("POST", srv.URL+"/v1/subscribers/import", strings.NewReader(csv))
		require.NoError(b, err)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "text/csv")
		b.StartTimer()
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		var out api.ImportResult
		require.Equal(b, http.StatusOK, resp.StatusCode)
		require.NoError(b, jsonDecode(resp, &out))
		resp.Body.Close()
		spent += time.Since(start)
		require.EqualValues(b, rows, out.Inserted)
		require.Empty(b, out.Rejected)
	}
	b.ReportMetric(float64(rows*b.N)/spent.Seconds(), "rows/s")

	psql, err := exec.LookPath("psql")
	if err != nil {
		return
	}
	b.StopTimer()
	file := filepath.Join(b.TempDir(), "subscribers.csv")
	require.NoError(b, os.WriteFile(file, []byte(csv), 0o644))
	url := pool.Config().ConnString()
	mk := exec.Command(psql, url, "-v", "ON_ERROR_STOP=1", "-qc", "CREATE TABLE bench_copy (email text, name text, status text, plan text)")
	outb, err := mk.CombinedOutput()
	require.NoError(b, err, "%s", outb)
	start := time.Now()
	outb, err = exec.Command(psql, url, "-v", "ON_ERROR_STOP=1", "-qc",
		`\copy bench_copy FROM '`+file+`' WITH (FORMAT csv, HEADER true)`).CombinedOutput()
	require.NoError(b, err, "%s", outb)
	b.ReportMetric(rows/time.Since(start).Seconds(), "copy_rows/s")
}
