// Command sendonce-harness holds what tests and measurements need and the shipped
// sendonce must not carry: the kill -9 harness (internal/chaos), the fake providers
// (internal/sink), the API load test (internal/loadtest), the throwaway cluster of
// `make test`, and `sendonce bench` with an SMTP sink beside it. The commands that
// run the service start the product binary named by -sendonce, as deploy/failover
// and deploy/upgrade do, so what they test is the binary that ships.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sendonce/sendonce/internal/bench"
	"github.com/sendonce/sendonce/internal/chaos"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/largeaccount"
	"github.com/sendonce/sendonce/internal/loadtest"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/sink"
)

const usage = `sendonce-harness: the test and measurement harnesses of sendonce (not shipped)

Usage:
  sendonce-harness chaos [-sendonce PATH] [-senders|-messages|-sequences|-approvals|-ab|-pool|-localtime|-pacing] [FLAGS]
                                     SIGKILL sendonce serve mid-send and check the delivery promise (make chaos…);
                                     -approvals: mid-approval, and check the audit log shows exactly what committed;
                                     -ab: an A/B test, in its test phase and the winner's send (one variant each);
                                     -pool: a sender pool whose primary dies mid-campaign (failover);
                                     -localtime: deliver_at_local over 9 zones, killed while rows wait and when due;
                                     -pacing: per-domain pacing and deferral backoff, measured at the sink
  sendonce-harness loadtest [-sendonce PATH] [FLAGS]
                                     API clients against sendonce serve while a campaign sends (make loadtest)
  sendonce-harness largeaccount [-sendonce PATH] [-keep] [FLAGS]
                                     seed 1,000,000 subscribers, 500 campaigns, 5,000,000 sends; time the
                                     dashboard's API calls (p50/p95 of 20 each)
  sendonce-harness bench [-sendonce PATH] [FLAGS]
                                     sendonce bench; with --provider smtp and no --sink, an SMTP sink
                                     in this process, out of the bench's (make bench)
  sendonce-harness sink http|smtp [FLAGS]
                                     a fake provider out of process; prints its address and stats URL
  sendonce-harness testdb -- COMMAND [ARGS...]
                                     COMMAND with TEST_DATABASE_URL on a throwaway cluster (make test)

-sendonce is the product binary the command runs (default: the sendonce beside this binary).
Each command's -h lists its flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if errors.Is(err, errUsage) {
			fmt.Fprint(os.Stderr, usage)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "sendonce-harness:", err)
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			os.Exit(exit.ExitCode()) // testdb and bench: the command's own status
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "chaos", "loadtest", "bench", "largeaccount":
		bin, args, err := sendonceFlag(args)
		if err != nil {
			return err
		}
		switch cmd {
		case "chaos":
			return chaos.Run(ctx, bin, args, stdout, stderr)
		case "loadtest":
			cfg, err := config.Load()
			if err != nil {
				return err
			}
			return loadtest.Command(ctx, bin, cfg, args, stdout, stderr)
		case "largeaccount":
			cfg, err := config.Load()
			if err != nil {
				return err
			}
			return largeaccount.Command(ctx, bin, cfg, args, stdout, stderr)
		default:
			return benchWithSink(ctx, bin, args, stdout, stderr)
		}
	case "sink":
		return sink.Command(ctx, args, stdout)
	case "testdb":
		return pgcluster.WithTestDB(ctx, args, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "sendonce-harness: unknown command %q\n", cmd)
		return errUsage
	}
}

// sendonceFlag takes -sendonce PATH (or -sendonce=PATH, with one or two dashes)
// out of args, wherever it stands, and returns the binary's absolute path and the
// rest of args for the command's own flags. Without it the binary is the sendonce
// beside this one (bin/sendonce for bin/sendonce-harness).
func sendonceFlag(args []string) (string, []string, error) {
	var bin string
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || name != "sendonce" {
			rest = append(rest, args[i])
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return "", nil, errors.New("-sendonce needs the path of the sendonce binary")
			}
			i++
			value = args[i]
		}
		bin = value
	}
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			return "", nil, err
		}
		bin = filepath.Join(filepath.Dir(self), "sendonce")
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", nil, fmt.Errorf("-sendonce: %w (build it: go build -o bin/sendonce ./cmd/sendonce)", err)
	}
	abs, err := filepath.Abs(path)
	return abs, rest, err
}

// benchWithSink runs `sendonce bench args…` of the product binary. With
// --provider smtp and no --sink it first starts an SMTP sink in this process (with
// the bench's --latency) and hands its address over: the product carries no sink,
// and a sink out of the bench's process keeps the sink's CPU out of the app's figure.
func benchWithSink(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	f, err := bench.Parse(config.Config{}, args)
	if err != nil {
		return err
	}
	if f.Provider == "smtp" && f.SMTPAddr == "" {
		s := sink.NewSMTP(sink.SMTPOptions{Latency: f.Latency})
		addr, err := s.Listen("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer s.Close()
		args = append([]string{"--sink=" + addr}, args...)
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"bench"}, args...)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	return cmd.Run()
}
