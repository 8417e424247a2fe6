package optin_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/optin"
	"github.com/sendonce/sendonce/internal/transactional"
)

// BenchmarkSignupDouble is one double opt-in sign-up of a new address: the account
// look-up, then one transaction with the list lock, the suppression check, the
// subscriber, the pending membership, the one-per-hour compare-and-set and the
// confirmation message with its send row. One connection, one sign-up at a time.
// Besides wall time it reports CPU per sign-up, steadier on a shared machine: this
// process's (getrusage) and the PostgreSQL backend's (/proc/<pid>/stat):
//
//	go test -run '^$' -bench BenchmarkSignupDouble -benchtime 2000x -count 5 ./internal/optin/
func BenchmarkSignupDouble(b *testing.B) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dbtest.New(b).Config().ConnString())
	require.NoError(b, err)
	cfg.MaxConns, cfg.MinConns = 1, 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(b, err)
	b.Cleanup(pool.Close)
	var acct, list int64
	var pub string
	var backend int
	require.NoError(b, pool.QueryRow(ctx, `INSERT INTO accounts (name) VALUES ('a') RETURNING id, public_id, pg_backend_pid()`).
		Scan(&acct, &pub, &backend))
	require.NoError(b, pool.QueryRow(ctx, `INSERT INTO lists (account_id, name, optin, public, optin_from_email)
		VALUES ($1, 'News', 'double', true, 'news@example.com') RETURNING id`, acct).Scan(&list))
	svc := optin.NewService(pool, transactional.NewService(pool, nil), mustRing(b), optin.Options{PublicURL: "https://x.example"})
	app0, pg0 := selfCPU(), backendCPU(backend)
	n := 0
	for ; b.Loop(); n++ {
		_, err := svc.Signup(ctx, pub, optin.Request{Email: "bench" + strconv.Itoa(n) + "@example.com", ListIDs: []int64{list}})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((selfCPU()-app0)*1000/float64(n), "app_cpu_ms/op")
	if pg0 >= 0 {
		b.ReportMetric((backendCPU(backend)-pg0)*1000/float64(n), "pg_cpu_ms/op")
	}
}

func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// backendCPU is a local process's user+system CPU seconds, or -1 when unreadable.
func backendCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return -1
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100 // USER_HZ
}
