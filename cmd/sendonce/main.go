// Command sendonce is the sendonce service: API, executor, migrations, local
// development server and operator tools in one binary.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/sendonce/sendonce/internal/config"
)

const usage = `sendonce: exactly-once email campaigns

Usage:
  sendonce serve [--api=true] [--executor=true]   run the API and/or the executor
  sendonce migrate                                 apply database migrations and exit
  sendonce healthcheck [URL|host:port]             exit 0 when the API's /healthz answers 200 (container HEALTHCHECK)
  sendonce dev                                     local PostgreSQL + migrations + demo account + serve
  sendonce account create NAME                     create an account and print its API key
  sendonce senders rotate-secrets                  re-encrypt sender credentials under the first SENDONCE_SECRETS_KEY key
  sendonce bench [--recipients=100000] [--batch-size=N] [--workers=N] [--latency=0] [--provider=instant|smtp]
                                                   measure import, build, send and the raw claim/ack ceiling

Configuration is read from SENDONCE_* environment variables (see README.md).
`

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sendonce:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := dispatch(ctx, cfg, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sendonce:", err)
		os.Exit(1)
	}
}
