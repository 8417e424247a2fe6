// Package dbtest gives each test its own real PostgreSQL database: a clone of a
// migrated template (github.com/peterldowns/pgtestdb). The server is the one named by
// TEST_DATABASE_URL, or else a throwaway cluster this test process starts from the
// local server binaries (as the postgres user when root). No test depends on a
// server that merely happens to run on port 5432.
package dbtest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver pgtestdb uses
	"github.com/peterldowns/pgtestdb"

	"github.com/sendonce/sendonce/db"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/postgres"
)

var (
	serverOnce sync.Once
	serverConf pgtestdb.Config
	serverErr  error
)

// ServerURL returns the URL of the test server's maintenance database, starting the
// throwaway cluster on first use.
func ServerURL(t testing.TB) string {
	t.Helper()
	conf := server(t)
	return conf.URL()
}

func server(t testing.TB) pgtestdb.Config {
	serverOnce.Do(func() {
		if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
			serverConf, serverErr = configFromURL(u)
			return
		}
		dir, err := pgcluster.TempDataDir("sendonce-test-")
		if err != nil {
			serverErr = err
			return
		}
		// The cluster lives as long as this test process: Pdeathsig stops it when the
		// process exits. Its folder is removed at the next start (see sweep).
		sweep()
		c, err := pgcluster.Start(context.Background(), pgcluster.Options{DataDir: dir, Fast: true})
		if err != nil {
			serverErr = err
			return
		}
		serverConf, serverErr = configFromURL(c.URL("postgres"))
	})
	if serverErr != nil {
		t.Fatalf("dbtest: no PostgreSQL for tests: %v", serverErr)
	}
	return serverConf
}

// sweep removes the folders of earlier throwaway clusters whose server is gone.
func sweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "sendonce-test-*"))
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil || time.Since(st.ModTime()) < time.Minute {
			continue
		}
		if pid, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(pid), "\n")
			if _, err := os.Stat("/proc/" + strings.TrimSpace(line)); err == nil {
				continue // still running
			}
		}
		_ = os.RemoveAll(d)
	}
}

func configFromURL(raw string) (pgtestdb.Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return pgtestdb.Config{}, fmt.Errorf("TEST_DATABASE_URL: %w", err)
	}
	pass, _ := u.User.Password()
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	q := u.Query()
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "disable")
	}
	return pgtestdb.Config{
		DriverName:                "pgx",
		Host:                      u.Hostname(),
		Port:                      port,
		User:                      u.User.Username(),
		Password:                  pass,
		Database:                  strings.TrimPrefix(u.Path, "/"),
		Options:                   q.Encode(),
		ForceTerminateConnections: true,
	}, nil
}

// migrator provisions pgtestdb's template with the embedded goose migrations.
type migrator struct{}

func (migrator) Hash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(db.Migrations, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := db.Migrations.ReadFile(path)
		h.Write([]byte(path))
		h.Write(b)
		return err
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

func (migrator) Migrate(ctx context.Context, _ *sql.DB, conf pgtestdb.Config) error {
	pool, err := postgres.Open(ctx, conf.URL(), 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = postgres.Migrate(ctx, pool)
	return err
}

// URL returns the URL of a fresh migrated database for this test, dropped when it ends.
func URL(t testing.TB) string {
	t.Helper()
	conf := pgtestdb.Custom(t, server(t), migrator{})
	return conf.URL()
}

// New returns a pool on a fresh migrated database for this test. The pool is closed
// and the database dropped when the test ends.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	u := URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := postgres.Open(ctx, u, 0)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}
