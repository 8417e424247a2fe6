package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/postgres"
)

// TestDatabaseErrorsByName: real PostgreSQL errors are recognised by pgerrcode's
// names (Code, IsCode, InClass) and translated to the application's codes.
func TestDatabaseErrorsByName(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	conn, err := pool.Acquire(ctx) // the temporary table lives on one connection
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `CREATE TEMP TABLE u (id int PRIMARY KEY, n int CHECK (n > 0))`)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `INSERT INTO u VALUES (1, 1)`)
	require.NoError(t, err)

	for _, tc := range []struct {
		sql   string
		code  string
		class string
		app   apperr.Code
	}{
		{`INSERT INTO u VALUES (1, 1)`, pgerrcode.UniqueViolation, pgerrcode.IntegrityConstraintViolation, apperr.Conflict},
		{`INSERT INTO u VALUES (2, 0)`, pgerrcode.CheckViolation, pgerrcode.IntegrityConstraintViolation, apperr.Invalid},
		{`SELECT 'x'::int`, pgerrcode.InvalidTextRepresentation, pgerrcode.DataException, apperr.Invalid},
		{`SELECT 2147483647::int + 1`, pgerrcode.NumericValueOutOfRange, pgerrcode.DataException, apperr.Invalid},
		{`SET LOCAL statement_timeout = 1; SELECT pg_sleep(1)`, pgerrcode.QueryCanceled, pgerrcode.QueryCanceled, apperr.DatabaseTimeout},
	} {
		_, err := conn.Exec(ctx, tc.sql)
		require.Error(t, err, tc.sql)
		require.Equal(t, tc.code, postgres.Code(err), tc.sql)
		require.True(t, postgres.IsCode(err, pgerrcode.AdminShutdown, tc.code), tc.sql)
		require.True(t, postgres.InClass(postgres.Code(err), tc.class), tc.sql)
		if tc.app != "" {
			require.True(t, apperr.Is(postgres.Translate(err), tc.app), "%s: %v", tc.sql, postgres.Translate(err))
		}
	}
	// A lock held elsewhere, waited for past lock_timeout.
	_, err = pool.Exec(ctx, `SELECT pg_advisory_lock(37)`)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `SET LOCAL lock_timeout = 1; SELECT pg_advisory_xact_lock(37)`)
	require.Equal(t, pgerrcode.LockNotAvailable, postgres.Code(err), "%v", err)
	require.True(t, apperr.Is(postgres.Translate(err), apperr.DatabaseTimeout), "%v", postgres.Translate(err))
	for _, code := range []string{pgerrcode.SerializationFailure, pgerrcode.DeadlockDetected} {
		err := postgres.Translate(&pgconn.PgError{Severity: "ERROR", Code: code})
		require.True(t, apperr.Is(err, apperr.Unavailable), "%s is retried: %v", code, err)
	}
	require.Equal(t, "ERROR", postgres.Severity(err))
	require.True(t, postgres.FromServer(err))
	require.NotEmpty(t, postgres.Message(err))
	require.False(t, postgres.FromServer(context.Canceled))
	require.Empty(t, postgres.Message(context.Canceled))
	require.Empty(t, postgres.Code(context.Canceled))
	require.False(t, postgres.IsCode(context.Canceled, pgerrcode.QueryCanceled))
	require.False(t, postgres.InClass("22", pgerrcode.DataException))
}

// TestNoRows: a query that answers no row is recognised through NoRows, wrapped or
// not, and through nothing else; Error reads it as not_found.
func TestNoRows(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	var n int
	err := pool.QueryRow(ctx, `SELECT 1 WHERE false`).Scan(&n)
	require.True(t, postgres.NoRows(err))
	require.True(t, postgres.NoRows(fmt.Errorf("campaign 7: %w", err)))
	require.True(t, apperr.Is(postgres.Error(err, "campaign"), apperr.NotFound))
	require.False(t, postgres.NoRows(nil))
	require.False(t, postgres.NoRows(context.Canceled))
	_, err = pool.Exec(ctx, `SELECT 'x'::int`)
	require.False(t, postgres.NoRows(err))
}
