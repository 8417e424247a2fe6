// Command sendonce is the sendonce service: API, executor, migrations, local
// development server and operator tools in one binary, and the client commands
// (internal/cli) that talk to a running service over its API.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/internal/cli"
)

// goFlagSpelling rewrites -help, the spelling the server commands' Go flag sets
// accepted, to --help (a single dash is a cluster of one-letter flags to cobra).
func goFlagSpelling(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "--" {
			copy(out[i:], args[i:])
			break
		}
		if a == "-help" {
			a = "--help"
		}
		out[i] = a
	}
	return out
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := newRoot()
	root.SetArgs(goFlagSpelling(os.Args[1:]))
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sendonce:", cli.ErrorText(err))
		os.Exit(cli.ExitCode(err))
	}
}

// newRoot is the command tree: the server commands, each handed its arguments
// untouched, and the client commands.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "sendonce",
		Short: "sendonce: exactly-once email campaigns",
		Long: `sendonce: exactly-once email campaigns.

The server commands read their configuration from SENDONCE_* environment variables (see docs/configuration.md).
The client commands reach a service at --url / $SENDONCE_URL with --api-key / $SENDONCE_API_KEY,
or what ` + "`sendonce login`" + ` saved. ` + cli.ExitCodesHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Help()
			return cli.Usage(errors.New("a command is required"))
		},
	}
	// --version prints what `sendonce version` prints. Declared here so cobra does
	// not also claim -v, a letter the commands may want for themselves.
	root.Flags().Bool("version", false, "print the release, commit and Go version (as sendonce version)")
	root.Version = version
	root.SetVersionTemplate(versionText())
	root.AddGroup(&cobra.Group{ID: "server", Title: "Server commands (run the service or reach its database; SENDONCE_* configuration):"})
	for _, c := range serverCommands() {
		c.GroupID = "server"
		root.AddCommand(c)
	}
	cli.AddCommands(root)
	return root
}
