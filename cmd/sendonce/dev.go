package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/session"
)

const demoAccount = "demo"

// dev is the newcomer's command: a local PostgreSQL in the data folder (unless
// SENDONCE_DATABASE_URL is set), migrations, a demo account whose key is printed, and
// the service on 127.0.0.1:8080. Ctrl-C stops the service, then its PostgreSQL.
func dev(ctx context.Context, cfg config.Config, stdout, stderr io.Writer) error {
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	if cfg.DatabaseURL == "" {
		cluster, err := startDevCluster(ctx, dataDir, stderr)
		if err != nil {
			return err
		}
		defer func() {
			fmt.Fprintln(stderr, "stopping local PostgreSQL")
			_ = cluster.Stop()
		}()
		if err := cluster.CreateDatabase(ctx, "sendonce"); err != nil {
			return err
		}
		cfg.DatabaseURL = cluster.URL("sendonce")
		fmt.Fprintf(stderr, "local PostgreSQL on %s (data in %s)\n", cfg.DatabaseURL, cluster.DataDir)
	}

	pool, _, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	key, err := demoKey(ctx, account.NewService(pool), filepath.Join(dataDir, "demo_api_key"))
	var login string
	if err == nil {
		login, err = newLoginLink(ctx, pool, demoAccount, "")
	}
	pool.Close()
	if err != nil {
		return err
	}
	cfg.Dev = true
	// The media library's images go in the data folder, with the database.
	if _, set := os.LookupEnv("SENDONCE_MEDIA_DIR"); !set {
		cfg.MediaDir = filepath.Join(dataDir, "media")
	}

	if len(cfg.UnsubscribeSecret) == 0 {
		secret, err := devUnsubscribeSecret(filepath.Join(dataDir, "unsubscribe_secret"))
		if err != nil {
			return err
		}
		cfg.UnsubscribeSecret = []string{secret}
	}
	if cfg.MessageIDKey == "" {
		key, err := devSecret(filepath.Join(dataDir, "message_id_key"), func() string { return rand.Text() + rand.Text() })
		if err != nil {
			return err
		}
		cfg.MessageIDKey = key
	}

	// A development receiver usually runs on this machine, over plain http: unless
	// the developer said otherwise, dev lets event deliveries reach it.
	for name, v := range map[string]*bool{"SENDONCE_EVENT_ALLOW_PRIVATE": &cfg.EventAllowPrivate,
		"SENDONCE_EVENT_ALLOW_HTTP": &cfg.EventAllowHTTP} {
		if _, set := os.LookupEnv(name); !set {
			*v = true
		}
	}
	if len(cfg.SecretsKey) == 0 {
		ring, err := devSecret(filepath.Join(dataDir, "secrets_key"), func() string { return sender.NewKeyRingEntry("dev") })
		if err != nil {
			return err
		}
		cfg.SecretsKey = []string{ring}
	}

	opts := Options{API: true, Executor: true, OnListen: func(addr net.Addr) {
		base := "http://" + addr.String()
		fmt.Fprintf(stdout, "\nDashboard (this link signs in once, within %s):\n  %s%s\n", session.LinkTTL, base, login)
		fmt.Fprintf(stdout, "\nSENDONCE_API_KEY=%s\n\n", key)
		fmt.Fprintf(stdout, "Try:\n")
		fmt.Fprintf(stdout, "  curl -fsS %s/readyz\n", base)
		fmt.Fprintf(stdout, "  curl -fsS -H \"Authorization: Bearer %s\" %s/v1/account\n", key, base)
		fmt.Fprintf(stdout, "  curl -fsS -H \"Authorization: Bearer %s\" -H 'Content-Type: application/json' \\\n"+
			"       -d '{\"email\":\"ada@example.com\",\"status\":\"confirmed\"}' %s/v1/subscribers\n\n", key, base)
		// Unset, SENDONCE_PUBLIC_URL follows SENDONCE_ADDR (config), so the links in
		// mail reach this process; say where they point, in case it was set.
		fmt.Fprintf(stdout, "Unsubscribe and confirmation links in mail point at %s (SENDONCE_PUBLIC_URL)\n\n", cfg.PublicURL)
	}}
	return run(ctx, cfg, opts, stdout, stderr)
}

// startDevCluster starts PostgreSQL in dataDir/pgdata. When this process is root and
// the postgres user cannot reach the project folder (a root home is 0700), the
// cluster lives under the system temp folder instead, keyed by the project path so
// the next run finds it again.
func startDevCluster(ctx context.Context, dataDir string, stderr io.Writer) (*pgcluster.Cluster, error) {
	pgdata := filepath.Join(dataDir, "pgdata")
	if os.Geteuid() == 0 {
		if err := os.Chmod(dataDir, 0o755); err != nil {
			return nil, err
		}
		if ok, blocker := pgcluster.Reachable(pgdata, postgresCred()); !ok {
			sum := sha256.Sum256([]byte(dataDir))
			alt := filepath.Join("/var/tmp", "sendonce-dev-"+hex.EncodeToString(sum[:6]))
			if err := os.MkdirAll(alt, 0o755); err != nil {
				return nil, err
			}
			fmt.Fprintf(stderr, "the postgres user cannot enter %s, so the local cluster lives in %s\n", blocker, alt)
			pgdata = filepath.Join(alt, "pgdata")
		}
	}
	fmt.Fprintln(stderr, "starting local PostgreSQL (the first start runs initdb)")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return pgcluster.Start(ctx, pgcluster.Options{DataDir: pgdata})
}

// demoKey returns a working API key for the demo account, creating the account on the
// first run. The key is kept in the data folder so later runs print the same key.
func demoKey(ctx context.Context, accounts *account.Service, path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		key := strings.TrimSpace(string(b))
		if _, err := accounts.Authenticate(ctx, key); err == nil {
			return key, nil
		}
	}
	var key string
	acc, err := accounts.FindByName(ctx, demoAccount)
	switch {
	case err == nil:
		key, err = accounts.CreateKey(ctx, acc.ID, "dev")
	case apperr.Is(err, apperr.NotFound):
		_, key, err = accounts.Create(ctx, demoAccount)
	}
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", errors.Join(errors.New("save demo key"), err)
	}
	return key, nil
}

// devUnsubscribeSecret returns the `keyid:secret` pair that signs this data folder's
// unsubscribe links, making a random one on the first run. It is private to the
// folder (0600) and kept, so links in mail sent by an earlier run keep working; there
// is no built-in key, because anyone could forge links signed with a public one.
func devUnsubscribeSecret(path string) (string, error) {
	return devSecret(path, func() string { return "dev:" + rand.Text() + rand.Text() })
}

// devSecret returns the secret kept in path (mode 0600), writing one made by fresh
// on the first run, so what an earlier run signed or derived stays valid: the
// unsubscribe secret and the Message-ID key (a replay keeps its Message-ID).
func devSecret(path string, fresh func() string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
	}
	s := fresh()
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		return "", errors.Join(errors.New("save "+filepath.Base(path)), err)
	}
	return s, nil
}

func postgresCred() *syscall.Credential {
	cred, _ := pgcluster.PostgresCredential()
	return cred
}
