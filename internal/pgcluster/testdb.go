package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// WithTestDB is `sendonce-harness testdb -- COMMAND…` (`make test`): it runs
// COMMAND with TEST_DATABASE_URL pointing at one throwaway PostgreSQL cluster,
// started from the local binaries and removed afterwards, so a whole `make test`
// run shares one server. An existing TEST_DATABASE_URL is used as is.
func WithTestDB(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New("usage: sendonce-harness testdb -- COMMAND [ARGS...]")
	}
	if os.Getenv("TEST_DATABASE_URL") == "" {
		dir, err := TempDataDir("sendonce-testdb-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(filepath.Dir(dir))
		cluster, err := Start(ctx, Options{DataDir: dir, Fast: true})
		if err != nil {
			return err
		}
		defer func() { _ = cluster.Stop() }()
		fmt.Fprintf(stderr, "test PostgreSQL on 127.0.0.1:%d (%s)\n", cluster.Port, dir)
		os.Setenv("TEST_DATABASE_URL", cluster.URL("postgres"))
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	return cmd.Run()
}

// Throwaway starts a PostgreSQL cluster (Fast if fast) in a fresh temporary folder
// and returns a URL to a new database on it and a function that stops and removes
// it (`sendonce bench` and `sendonce-harness loadtest` without SENDONCE_DATABASE_URL).
func Throwaway(ctx context.Context, fast bool, stderr io.Writer) (string, func(), error) {
	dir, err := TempDataDir("sendonce-bench-")
	if err != nil {
		return "", nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cluster, err := Start(startCtx, Options{DataDir: dir, Fast: fast})
	if err != nil {
		os.RemoveAll(filepath.Dir(dir))
		return "", nil, err
	}
	stop := func() {
		_ = cluster.Stop()
		os.RemoveAll(filepath.Dir(dir))
	}
	if err := cluster.CreateDatabase(ctx, "sendonce"); err != nil {
		stop()
		return "", nil, err
	}
	fmt.Fprintf(stderr, "throwaway PostgreSQL on 127.0.0.1:%d (%s)\n", cluster.Port, dir)
	return cluster.URL("sendonce"), stop, nil
}
