package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/sendonce/sendonce/internal/pgcluster"
)

// withTestDB runs command with TEST_DATABASE_URL pointing at one throwaway
// PostgreSQL cluster, started from the local binaries and removed afterwards, so a
// whole `make test` run shares one server. An existing TEST_DATABASE_URL is used as is.
func withTestDB(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New("usage: sendonce testdb -- COMMAND [ARGS...]")
	}
	if os.Getenv("TEST_DATABASE_URL") == "" {
		dir, err := pgcluster.TempDataDir("sendonce-testdb-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(filepath.Dir(dir))
		cluster, err := pgcluster.Start(ctx, pgcluster.Options{DataDir: dir, Fast: true})
		if err != nil {
			return err
		}
		defer cluster.Stop()
		fmt.Fprintf(stderr, "test PostgreSQL on 127.0.0.1:%d (%s)\n", cluster.Port, dir)
		os.Setenv("TEST_DATABASE_URL", cluster.URL("postgres"))
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	return cmd.Run()
}
