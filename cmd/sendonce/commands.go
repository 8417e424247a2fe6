package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/bench"
	"github.com/sendonce/sendonce/internal/bounce"
	"github.com/sendonce/sendonce/internal/cli"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dkim"
	"github.com/sendonce/sendonce/internal/operator"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/user"
)

// serverCommands are the commands that run the service or reach its database,
// all read SENDONCE_* configuration (docs/configuration.md) except version.
func serverCommands() []*cobra.Command {
	var opts Options
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Run the API and/or the executor (--api=false, --executor=false)",
		Args:  noArgs,
		RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, _ []string) error {
			if cfg.DatabaseURL == "" {
				return errors.New("SENDONCE_DATABASE_URL is required for serve (use `sendonce dev` for a local database)")
			}
			return run(ctx, cfg, opts, os.Stdout, os.Stderr)
		}),
	}
	serve.Flags().BoolVar(&opts.API, "api", true, "serve the HTTP API")
	serve.Flags().BoolVar(&opts.Executor, "executor", true, "run the executor (scheduler and senders)")

	account := &cobra.Command{Use: "account", Short: "account create NAME [--owner-email EMAIL]: create an account and print its API key (EMAIL: its first owner, who signs in by email link); account login NAME: a dashboard login link; account delete ID: delete it and all it holds; account list; account suspend|resume ID"}
	var ownerEmail string
	create := &cobra.Command{Use: "create NAME", Short: "Create an account and print its API key", Args: exactly(1),
		RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, args []string) error {
			return createAccount(ctx, cfg, args[0], ownerEmail)
		})}
	create.Flags().StringVar(&ownerEmail, "owner-email", "", "the account's first owner, who signs in by email link and may invite others")
	account.AddCommand(create,
		&cobra.Command{Use: "login NAME", Short: "Print a one-time dashboard login link (15 minutes)", Args: exactly(1),
			RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, args []string) error {
				return loginLink(ctx, cfg, args[0])
			})},
		&cobra.Command{Use: "delete ID", Short: "Delete an account and all it holds, in short batches", Args: exactly(1),
			RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, args []string) error {
				return deleteAccount(ctx, cfg, args[0])
			})},
		&cobra.Command{Use: "list", Short: "List the accounts: id, status, name", Args: noArgs,
			RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, _ []string) error {
				return listAccounts(ctx, cfg, os.Stdout)
			})},
		&cobra.Command{Use: "suspend ID", Short: "Suspend an account: its keys and sessions get 403, none of its work is sent", Args: exactly(1),
			RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, args []string) error {
				return suspendAccount(ctx, cfg, args[0], true)
			})},
		&cobra.Command{Use: "resume ID", Short: "Resume a suspended account where it stopped", Args: exactly(1),
			RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, args []string) error {
				return suspendAccount(ctx, cfg, args[0], false)
			})},
	)
	opKey := &cobra.Command{Use: "operator", Short: "operator key: make an operator key and the SENDONCE_OPERATOR_KEY_HASH to configure for it"}
	opKey.AddCommand(&cobra.Command{Use: "key", Short: "Print a new operator key and its SENDONCE_OPERATOR_KEY_HASH", Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			token, hash, err := operator.NewKey()
			if err != nil {
				return err
			}
			fmt.Printf("SENDONCE_OPERATOR_KEY=%s\nSENDONCE_OPERATOR_KEY_HASH=%s\n", token, hash)
			fmt.Fprintln(os.Stderr, "configure the server with the hash only; keep the key with the operator")
			return nil
		}})
	senders := &cobra.Command{Use: "senders", Short: "senders rotate-secrets: re-encrypt sender credentials under the first key"}
	senders.AddCommand(&cobra.Command{Use: "rotate-secrets", Short: "Re-encrypt sender credentials, DKIM keys and bounce mailbox passwords under the first SENDONCE_SECRETS_KEY key",
		Args: noArgs, RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, _ []string) error {
			return rotateSecrets(ctx, cfg)
		})})

	return []*cobra.Command{
		serve,
		{Use: "migrate", Short: "Apply database migrations and exit", Args: noArgs,
			RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, _ []string) error {
				return migrate(ctx, cfg)
			})},
		{Use: "dev", Short: "Local PostgreSQL, migrations, a demo account, and serve", Args: noArgs,
			RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, _ []string) error {
				if os.Getenv("SENDONCE_LOG_FORMAT") == "" {
					cfg.LogFormat = "text"
				}
				return dev(ctx, cfg, os.Stdout, os.Stderr)
			})},
		account,
		opKey,
		{Use: "healthcheck [URL|host:port]", Short: "Exit 0 when the API's /healthz answers 200 (the container HEALTHCHECK)",
			Args: cobra.ArbitraryArgs, // healthURL explains a wrong count itself
			RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, args []string) error {
				return healthcheck(ctx, cfg.Addr, args, os.Stdout)
			})},
		senders,
		{Use: "bench", Short: "Measure import, build, send and the raw claim/ack ceiling",
			// Its flags belong to internal/bench, shared with the benchmark tests; -h prints them.
			DisableFlagParsing: true,
			RunE: withConfig(func(ctx context.Context, cfg config.Config, _ *cobra.Command, args []string) error {
				err := bench.Command(ctx, cfg, args, os.Stdout, os.Stderr, unsubscribeLinks)
				if errors.Is(err, flag.ErrHelp) { // the flag set printed its usage: asked for, not a failure
					return nil
				}
				return err
			})},
		{Use: "version", Short: "Print the release, commit and Go version of this binary (also sendonce --version)", Args: noArgs,
			// No configuration: a bad SENDONCE_* setting must not stop an operator from
			// asking which release is installed.
			RunE: func(cmd *cobra.Command, _ []string) error {
				_, err := io.WriteString(cmd.OutOrStdout(), versionText())
				return err
			}},
	}
}

// withConfig runs do with the SENDONCE_* configuration; a bad one is a usage error (exit 2).
func withConfig(do func(context.Context, config.Config, *cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cfg, err := config.Load()
		if err != nil {
			return cli.Usage(err)
		}
		return do(cmd.Context(), cfg, cmd, args)
	}
}

func noArgs(cmd *cobra.Command, args []string) error { return exactly(0)(cmd, args) }

func exactly(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return cli.Usage(fmt.Errorf("usage: %s", cmd.UseLine()))
		}
		return nil
	}
}

func needDatabase(cfg config.Config) error {
	if cfg.DatabaseURL == "" {
		return errors.New("SENDONCE_DATABASE_URL is required")
	}
	return nil
}

func migrate(ctx context.Context, cfg config.Config) error {
	if err := needDatabase(cfg); err != nil {
		return err
	}
	pool, n, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	pool.Close()
	fmt.Printf("migrations applied: %d\n", n)
	return nil
}

func createAccount(ctx context.Context, cfg config.Config, name, ownerEmail string) error {
	if err := needDatabase(cfg); err != nil {
		return err
	}
	pool, _, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if ownerEmail != "" {
		// Checked first, so a bad address creates no account without an owner.
		if _, err := address.Parse(ownerEmail); err != nil {
			return fmt.Errorf("--owner-email: %w", err)
		}
	}
	// Through the operator's service, so the creation is in the account's audit
	// log (actor "operator") as one made through the operator API is.
	acc, token, err := operator.NewService(pool, account.NewService(pool)).Create(ctx, strings.TrimSpace(name), operator.QuotaUpdate{})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "account %d (%s) created\n", acc.ID, acc.Name)
	if ownerEmail != "" {
		// The first person of the account: an owner with no password yet, who
		// signs in by email link (POST /v1/sign-in-links) and may then invite others.
		if _, err := user.NewService(pool, nil, nil, nil, user.Options{}).AddOwner(ctx, acc.ID, ownerEmail); err != nil {
			return fmt.Errorf("owner %s: %w", ownerEmail, err)
		}
		fmt.Fprintf(os.Stderr, "%s is its owner; they sign in by email link\n", strings.TrimSpace(ownerEmail))
	}
	fmt.Printf("SENDONCE_API_KEY=%s\n", token)
	return nil
}

// withDatabase runs fn on a migrated pool of SENDONCE_DATABASE_URL, closed after.
func withDatabase(ctx context.Context, cfg config.Config, fn func(pool *pgxPool) error) error {
	if err := needDatabase(cfg); err != nil {
		return err
	}
	pool, _, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	return fn(pool)
}

// accountID reads an account's numeric id from a command's argument.
func accountID(arg, usage string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id < 1 {
		return 0, errors.New(usage)
	}
	return id, nil
}

// deleteAccount deletes an account and all it holds, in bounded batches
// (account.Service.Delete) so the other accounts' events are not held back.
func deleteAccount(ctx context.Context, cfg config.Config, arg string) error {
	id, err := accountID(arg, "usage: sendonce account delete ID (the account's numeric id)")
	if err != nil {
		return err
	}
	return withDatabase(ctx, cfg, func(pool *pgxPool) error {
		n, err := account.NewService(pool).Delete(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "account %d deleted (%d rows in batches, then the account)\n", id, n)
		return nil
	})
}

// listAccounts prints every account that is not deleted, in id order.
func listAccounts(ctx context.Context, cfg config.Config, out io.Writer) error {
	return withDatabase(ctx, cfg, func(pool *pgxPool) error {
		ops := operator.NewService(pool, account.NewService(pool))
		var after int64
		for {
			page, err := ops.List(ctx, after, 500)
			if err != nil {
				return err
			}
			for _, a := range page {
				status := "active"
				if a.SuspendedAt != nil {
					status = "suspended"
				}
				fmt.Fprintf(out, "%d\t%s\t%s\n", a.ID, status, a.Name)
				after = a.ID
			}
			if len(page) < 500 {
				return nil
			}
		}
	})
}

// suspendAccount suspends (or resumes) an account, as the operator API does.
func suspendAccount(ctx context.Context, cfg config.Config, arg string, suspend bool) error {
	id, err := accountID(arg, "usage: sendonce account suspend|resume ID (the account's numeric id)")
	if err != nil {
		return err
	}
	return withDatabase(ctx, cfg, func(pool *pgxPool) error {
		ops := operator.NewService(pool, account.NewService(pool))
		change, verb := ops.Resume, "resumed"
		if suspend {
			change, verb = ops.Suspend, "suspended"
		}
		if _, err := change(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "account %d %s\n", id, verb)
		return nil
	})
}

func openWithTimeout(ctx context.Context, cfg config.Config) (*pgxPool, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return postgres.OpenMode(ctx, cfg.DatabaseURL, cfg.DBMaxConns, cfg.DatabaseExecMode)
}

// openMigrated opens the pool and applies pending migrations, returning how many
// ran; on a migration failure the pool is closed.
func openMigrated(ctx context.Context, cfg config.Config) (*pgxPool, int, error) {
	pool, err := openWithTimeout(ctx, cfg)
	if err != nil {
		return nil, 0, err
	}
	n, err := migrateSession(ctx, cfg, pool) // on SENDONCE_DIRECT_DATABASE_URL when set
	if err != nil {
		pool.Close()
		return nil, 0, err
	}
	return pool, n, nil
}

// rotateSecrets re-encrypts every stored sender credential, DKIM key and bounce
// mailbox password under the first key of SENDONCE_SECRETS_KEY, after which the
// other keys can leave the ring.
func rotateSecrets(ctx context.Context, cfg config.Config) error {
	if err := needDatabase(cfg); err != nil {
		return err
	}
	ring, err := sender.ParseKeyRing(cfg.SecretsKey)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	pool, _, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	n, err := sender.Rotate(ctx, pool, ring)
	if err != nil {
		return err
	}
	fmt.Printf("sender credentials re-encrypted under %q: %d\n", ring.First(), n)
	if n, err = dkim.Rotate(ctx, pool, ring); err != nil {
		return err
	}
	fmt.Printf("DKIM keys re-encrypted under %q: %d\n", ring.First(), n)
	if n, err = bounce.Rotate(ctx, pool, ring); err != nil {
		return err
	}
	fmt.Printf("bounce mailbox passwords re-encrypted under %q: %d\n", ring.First(), n)
	return nil
}
