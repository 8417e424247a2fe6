// Package postgres owns the connection pool, the migrations and the translation of
// PostgreSQL errors into application errors.
package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/sendonce/sendonce/db"
)

// Open connects a pool and waits until the database answers or ctx ends.
func Open(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	return OpenMode(ctx, url, maxConns, "")
}

// ExecModes are the pgx statement modes SENDONCE_DATABASE_EXEC_MODE accepts, by name.
// Behind PgBouncer in transaction pooling before 1.21, a server connection changes
// between transactions, so a statement prepared on one is unknown on the next: only
// exec (unnamed statements, one round trip) and simple_protocol work there.
// describe_exec and cache_describe are refused in that setting too, as their
// describe and execute can land on two server connections.
var ExecModes = map[string]pgx.QueryExecMode{
	"cache_statement": pgx.QueryExecModeCacheStatement,
	"cache_describe":  pgx.QueryExecModeCacheDescribe,
	"describe_exec":   pgx.QueryExecModeDescribeExec,
	"exec":            pgx.QueryExecModeExec,
	"simple_protocol": pgx.QueryExecModeSimpleProtocol,
}

// OpenMode is Open with the statement exec mode named by mode (a key of ExecModes);
// an empty mode keeps the URL's default_query_exec_mode, else pgx's cache_statement.
func OpenMode(ctx context.Context, url string, maxConns int32, mode string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	if mode != "" {
		m, ok := ExecModes[mode]
		if !ok {
			return nil, fmt.Errorf("unknown statement exec mode %q", mode)
		}
		cfg.ConnConfig.DefaultQueryExecMode = m
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	for {
		err = pool.Ping(ctx)
		if err == nil {
			return pool, nil
		}
		select {
		case <-ctx.Done():
			pool.Close()
			return nil, fmt.Errorf("database not reachable: %w", err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func migrationsFS() fs.FS {
	sub, err := fs.Sub(db.Migrations, "migrations")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	return sub
}

func provider(pool *pgxpool.Pool) (*goose.Provider, func() error, error) {
	sqlDB := stdlib.OpenDBFromPool(pool)
	// A session-level advisory lock serialises replicas that start at the same moment:
	// one migrates, the others wait and then find nothing pending.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		sqlDB.Close()
		return nil, nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrationsFS(),
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		sqlDB.Close()
		return nil, nil, err
	}
	return p, sqlDB.Close, nil
}

// Migrate applies every pending migration under an advisory lock and returns how many ran.
func Migrate(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	p, closeDB, err := provider(pool)
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	defer func() { _ = closeDB() }()
	results, err := p.Up(ctx)
	if err != nil {
		return len(results), fmt.Errorf("migrate: %w", err)
	}
	return len(results), nil
}

// MigrationsCurrent reports whether the database has every migration this binary knows.
func MigrationsCurrent(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrationsFS(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return false, err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return false, err
	}
	return !pending, nil
}

// InTx runs fn in a transaction, committing when fn returns nil. When ctx carries
// a TxHook (WithTxHook), its BeforeCommit runs in the transaction after fn
// succeeds, and Committed once the commit has: this is how a request's audit entry
// is written in the transaction of the change without any domain package having
// to remember it.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) error {
	hook, _ := ctx.Value(txHookKey{}).(TxHook)
	if hook == nil {
		return pgx.BeginFunc(ctx, pool, fn)
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return hook.BeforeCommit(ctx, tx)
	})
	if err == nil {
		hook.Committed()
	}
	return err
}

// TxHook is work that rides along with every transaction InTx runs under a
// context: BeforeCommit writes in the transaction (an error rolls it back),
// Committed learns that it committed.
type TxHook interface {
	BeforeCommit(ctx context.Context, tx pgx.Tx) error
	Committed()
}

type txHookKey struct{}

// WithTxHook returns ctx whose transactions (InTx) run h.
func WithTxHook(ctx context.Context, h TxHook) context.Context {
	return context.WithValue(ctx, txHookKey{}, h)
}

// CampaignChannel is the LISTEN/NOTIFY channel that wakes executors: the API sends
// pg_notify(CampaignChannel, '<campaign id>') inside the transaction that approves,
// resumes or reschedules a campaign, so it is delivered on commit.
const CampaignChannel = "sendonce_campaigns"
