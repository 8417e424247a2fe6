package account_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
)

// statementCounter counts the statements a pool runs.
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestAuthenticateKeyOneStatementWhenRecentlyUsed: every API request is
// authenticated before anything else runs, so it must cost one statement; the
// advisory last_used_at is written only when the stored one is over a minute old.
func TestAuthenticateKeyOneStatementWhenRecentlyUsed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.URL(t)
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	counter := &statementCounter{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	svc := account.NewService(pool)

	acct, token, err := svc.Create(ctx, "tracer")
	require.NoError(t, err)

	// First use: the key was never used, so it is looked up and touched.
	before := counter.n.Load()
	caller, err := svc.AuthenticateKey(ctx, token)
	require.NoError(t, err)
	require.Equal(t, acct.ID, caller.AccountID)
	require.EqualValues(t, 2, counter.n.Load()-before, "a key never used is looked up and touched")
	var used time.Time
	require.NoError(t, pool.QueryRow(ctx, `SELECT last_used_at FROM api_keys WHERE id = $1`, caller.ID).Scan(&used))

	// Used a moment ago: one statement, and last_used_at stays.
	before = counter.n.Load()
	_, err = svc.AuthenticateKey(ctx, token)
	require.NoError(t, err)
	require.EqualValues(t, 1, counter.n.Load()-before, "a key used within the minute costs one statement")
	var again time.Time
	require.NoError(t, pool.QueryRow(ctx, `SELECT last_used_at FROM api_keys WHERE id = $1`, caller.ID).Scan(&again))
	require.True(t, used.Equal(again))

	// Last used over a minute ago: touched again.
	_, err = pool.Exec(ctx, `UPDATE api_keys SET last_used_at = now() - interval '2 minutes' WHERE id = $1`, caller.ID)
	require.NoError(t, err)
	_, err = svc.AuthenticateKey(ctx, token)
	require.NoError(t, err)
	require.NoError(t, pool.QueryRow(ctx, `SELECT last_used_at FROM api_keys WHERE id = $1`, caller.ID).Scan(&again))
	require.WithinDuration(t, time.Now(), again, 30*time.Second)

	// A revoked key is refused, whatever its last use.
	_, err = pool.Exec(ctx, `UPDATE api_keys SET revoked_at = now() WHERE id = $1`, caller.ID)
	require.NoError(t, err)
	_, err = svc.AuthenticateKey(ctx, token)
	require.Error(t, err)
}
