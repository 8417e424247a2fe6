package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/bench"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/user"
)

// dispatch runs one subcommand.
func dispatch(ctx context.Context, cfg config.Config, args []string) error {
	switch args[0] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		opts := Options{}
		fs.BoolVar(&opts.API, "api", true, "serve the HTTP API")
		fs.BoolVar(&opts.Executor, "executor", true, "run the executor (scheduler and senders)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if cfg.DatabaseURL == "" {
			return errors.New("SENDONCE_DATABASE_URL is required for serve (use `sendonce dev` for a local database)")
		}
		return run(ctx, cfg, opts, os.Stdout, os.Stderr)
	case "migrate":
		return migrate(ctx, cfg)
	case "healthcheck": // the container HEALTHCHECK (healthcheck.go)
		return healthcheck(ctx, cfg.Addr, args[1:], os.Stdout)
	case "dev":
		if os.Getenv("SENDONCE_LOG_FORMAT") == "" {
			cfg.LogFormat = "text"
		}
		return dev(ctx, cfg, os.Stdout, os.Stderr)
	case "account":
		if len(args) == 3 && args[1] == "login" {
			return loginLink(ctx, cfg, args[2])
		}
		if len(args) == 3 && args[1] == "delete" {
			return deleteAccount(ctx, cfg, args[2])
		}
		usage := errors.New("usage: sendonce account create NAME [--owner-email EMAIL] | sendonce account login NAME | sendonce account delete ID")
		if len(args) < 3 || args[1] != "create" {
			return usage
		}
		var owner string
		switch rest := args[3:]; {
		case len(rest) == 0:
		case len(rest) == 2 && rest[0] == "--owner-email":
			owner = rest[1]
		case len(rest) == 1 && strings.HasPrefix(rest[0], "--owner-email="):
			owner = strings.TrimPrefix(rest[0], "--owner-email=")
		default:
			return usage
		}
		return createAccount(ctx, cfg, args[2], owner)
	case "senders":
		if len(args) != 2 || args[1] != "rotate-secrets" {
			return errors.New("usage: sendonce senders rotate-secrets")
		}
		return rotateSecrets(ctx, cfg)
	case "bench":
		return bench.Command(ctx, cfg, args[1:], os.Stdout, os.Stderr, unsubscribeLinks)
	default:
		return fmt.Errorf("unknown command %q\n\n%s", args[0], usage)
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
	acc, token, err := account.NewService(pool).Create(ctx, strings.TrimSpace(name))
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

// deleteAccount deletes an account and all it holds, in bounded batches
// (account.Service.Delete) so the other accounts' events are not held back.
func deleteAccount(ctx context.Context, cfg config.Config, arg string) error {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id < 1 {
		return errors.New("usage: sendonce account delete ID (the account's numeric id)")
	}
	if err := needDatabase(cfg); err != nil {
		return err
	}
	pool, _, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	n, err := account.NewService(pool).Delete(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "account %d deleted (%d rows in batches, then the account)\n", id, n)
	return nil
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

// rotateSecrets re-encrypts every stored sender credential under the first key of
// SENDONCE_SECRETS_KEY, after which the other keys can leave the ring.
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
	return nil
}
