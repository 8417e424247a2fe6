package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/session"
)

// loginLink prints a one-time dashboard login link for the (oldest) account named
// name: `sendonce account login NAME`.
func loginLink(ctx context.Context, cfg config.Config, name string) error {
	if err := needDatabase(cfg); err != nil {
		return err
	}
	pool, _, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	url, err := newLoginLink(ctx, pool, strings.TrimSpace(name), cfg.PublicURL)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "open within %s; it works once:\n", session.LinkTTL)
	fmt.Println(url)
	return nil
}

// newLoginLink makes a login link of the account named name on publicURL.
func newLoginLink(ctx context.Context, pool *pgxpool.Pool, name, publicURL string) (string, error) {
	accounts := account.NewService(pool)
	acc, err := accounts.FindByName(ctx, name)
	if err != nil {
		return "", err
	}
	token, _, err := session.NewService(pool, accounts).NewLoginLink(ctx, acc.ID)
	if err != nil {
		return "", err
	}
	return session.LinkURL(publicURL, token), nil
}
