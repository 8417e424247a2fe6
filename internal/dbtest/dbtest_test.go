package dbtest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
)

func TestEachTestGetsItsOwnMigratedDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := dbtest.New(t), dbtest.New(t)

	_, err := store.New(a).AccountCreate(ctx, "only in a")
	require.NoError(t, err)

	var n int
	require.NoError(t, a.QueryRow(ctx, "SELECT count(*) FROM accounts").Scan(&n))
	require.Equal(t, 1, n)
	require.NoError(t, b.QueryRow(ctx, "SELECT count(*) FROM accounts").Scan(&n))
	require.Equal(t, 0, n, "databases must be isolated")
}
