// Command sendonce is the sendonce service: API, executor, migrations, local
// development server and operator tools in one binary, and the client commands
// (internal/cli) that talk to a running service over its API.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/internal/cli"
	"github.com/sendonce/sendonce/internal/config"
)

const usage = `sendonce: exactly-once email campaigns

Usage:
  sendonce serve [--api=true] [--executor=true]   run the API and/or the executor
  sendonce migrate                                 apply database migrations and exit
  sendonce healthcheck [URL|host:port]             exit 0 when the API's /healthz answers 200 (container HEALTHCHECK)
  sendonce dev                                     local PostgreSQL + migrations + demo account + serve
  sendonce account create NAME [--owner-email E]   create an account and print its API key (E: its first owner)
  sendonce account login NAME                      print a one-time dashboard login link (15 minutes)
  sendonce account delete ID                       delete an account and all it holds, in short batches
  sendonce senders rotate-secrets                  re-encrypt sender credentials under the first SENDONCE_SECRETS_KEY key
  sendonce version                                 print the release, commit and Go version of this binary
  sendonce bench [--recipients=100000] [--batch-size=N] [--workers=N] [--latency=0]
                 [--provider=instant|smtp --sink=HOST:PORT]
                                                   measure import, build, send and the raw claim/ack ceiling

Configuration is read from SENDONCE_* environment variables (see docs/configuration.md).
`

// serverCommands are the commands that run the service or reach its database; they
// parse their own flags (commands.go), as before the client commands came.
// flags marks those whose own flag set answers -h/--help with its flags.
var serverCommands = []struct {
	name, short string
	flags       bool
}{
	{"serve", "Run the API and/or the executor (--api=false, --executor=false)", true},
	{"migrate", "Apply database migrations and exit", false},
	{"dev", "Local PostgreSQL, migrations, a demo account, and serve", false},
	{"account", "account create NAME [--owner-email EMAIL]: create an account and print its API key (EMAIL: its first owner, who signs in by email link); account login NAME: a dashboard login link; account delete ID: delete it and all it holds", false},
	{"healthcheck", "Exit 0 when the API's /healthz answers 200 (the container HEALTHCHECK)", false},
	{"senders", "senders rotate-secrets: re-encrypt sender credentials under the first key", false},
	{"bench", "Measure import, build, send and the raw claim/ack ceiling", true},
	{"version", "Print the release, commit and Go version of this binary (also sendonce --version)", false},
}

// helpAsked reports whether args ask for help: cobra leaves a server command's
// arguments unparsed, so one without a flag set of its own would otherwise run
// (dev would start its database and serve) instead of explaining itself.
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			return true
		case "--":
			return false
		}
	}
	return false
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sendonce:", err)
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
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cli.Usage(fmt.Errorf("unknown command %q (see sendonce --help)", args[0]))
			}
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
	for _, sc := range serverCommands {
		root.AddCommand(&cobra.Command{
			Use:                sc.name,
			Short:              sc.short,
			GroupID:            "server",
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				if !sc.flags && helpAsked(args) {
					return cmd.Help()
				}
				// version reads no configuration: a bad SENDONCE_* setting must not
				// stop an operator from asking which release is installed.
				if sc.name == "version" {
					if len(args) > 0 {
						return cli.Usage(errors.New("usage: sendonce version"))
					}
					_, err := io.WriteString(cmd.OutOrStdout(), versionText())
					return err
				}
				cfg, err := config.Load()
				if err != nil {
					return cli.Usage(err)
				}
				err = dispatch(cmd.Context(), cfg, append([]string{sc.name}, args...))
				if errors.Is(err, flag.ErrHelp) { // the flag set printed its usage: asked for, not a failure
					return nil
				}
				return err
			},
		})
	}
	cli.AddCommands(root)
	return root
}
