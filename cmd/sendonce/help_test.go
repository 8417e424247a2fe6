package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/cli"
)

// TestServerCommandHelp: --help of a server command that takes no flags of its
// own (dev, migrate, account, senders, healthcheck) prints its usage and exits 0
// without doing anything: dev used to start (its data folder made, a database
// dialled) instead. A command with flags of its own (serve) has its flag set
// print them (on stderr) and exits 0 too.
func TestServerCommandHelp(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "never")
	t.Setenv("SENDONCE_DATA_DIR", dataDir)
	// Were the command to run, it would fail at once on this address rather than start a cluster.
	t.Setenv("SENDONCE_DATABASE_URL", "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	for _, args := range [][]string{{"dev", "--help"}, {"dev", "-h"}, {"migrate", "--help"}, {"account", "--help"},
		{"senders", "-help"}, {"healthcheck", "--help"}, {"serve", "--help"}} {
		own := args[0] == "serve"
		var out bytes.Buffer
		root := newRoot()
		root.SetArgs(goFlagSpelling(args)) // as main does
		root.SetOut(&out)
		root.SetErr(&out)
		require.NoError(t, root.ExecuteContext(context.Background()), "%v: %s", args, out.String())
		if !own {
			require.Contains(t, out.String(), "sendonce "+args[0], "%v prints its usage", args)
		}
		_, err := os.Stat(dataDir)
		require.True(t, os.IsNotExist(err), "%v made the data folder: it ran", args)
	}
}

// TestServerCommandsAreCobraCommands: the server commands are cobra commands like
// the client ones: serve's flags are in its help (on the command's output), and a
// mistyped subcommand of account is a usage error (exit 2) naming the right one.
func TestServerCommandsAreCobraCommands(t *testing.T) {
	execute := func(args ...string) (string, error) {
		var out bytes.Buffer
		root := newRoot()
		root.SetArgs(goFlagSpelling(args))
		root.SetOut(&out)
		root.SetErr(&out)
		err := root.ExecuteContext(context.Background())
		return out.String(), err
	}
	out, err := execute("serve", "--help")
	require.NoError(t, err)
	require.Contains(t, out, "--executor")
	require.Contains(t, out, "--api")

	_, err = execute("account", "crate", "ops")
	require.Error(t, err)
	require.Equal(t, cli.ExitUsage, cli.ExitCode(err))
	require.Contains(t, err.Error(), "Did you mean this?\n\tcreate")

	_, err = execute("account", "create")
	require.Equal(t, cli.ExitUsage, cli.ExitCode(err), "NAME is missing")
}
