package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
)

// The operator's account commands: list shows each account's state, suspend and
// resume change it, delete removes the account; a bad id is a usage error that
// changes nothing. A second account is around, untouched. Suspend and resume are
// in the account's audit log.
func TestAccountCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := config.Default()
	cfg.DatabaseURL = dbtest.URL(t)
	require.NoError(t, migrate(ctx, cfg))
	pool, err := openWithTimeout(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	other, _, err := account.NewService(pool).Create(ctx, "bystander")
	require.NoError(t, err)
	acct, _, err := account.NewService(pool).Create(ctx, "tenant")
	require.NoError(t, err)
	require.NotEqual(t, other.ID, acct.ID)
	id := fmt.Sprint(acct.ID)

	list := func() string {
		var out strings.Builder
		require.NoError(t, listAccounts(ctx, cfg, &out))
		return out.String()
	}
	require.Contains(t, list(), id+"\tactive\ttenant\n")
	require.NoError(t, suspendAccount(ctx, cfg, id, true))
	require.Contains(t, list(), id+"\tsuspended\ttenant\n")
	require.Contains(t, list(), fmt.Sprintf("%d\tactive\tbystander\n", other.ID))
	require.NoError(t, suspendAccount(ctx, cfg, id, false))
	require.Contains(t, list(), id+"\tactive\ttenant\n")
	// Both are in the account's audit log, the operator at the command line as actor.
	rows, err := pool.Query(ctx, `SELECT action FROM audit_log
		WHERE account_id = $1 AND actor_type = 'operator' AND source_addr = 'command line' ORDER BY id`, acct.ID)
	require.NoError(t, err)
	actions, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"account.suspend", "account.resume"}, actions)

	for _, bad := range []string{"", "0", "-3", "x1"} {
		require.ErrorContains(t, suspendAccount(ctx, cfg, bad, true), "usage: sendonce account suspend|resume ID")
		require.ErrorContains(t, deleteAccount(ctx, cfg, bad), "usage: sendonce account delete ID")
	}
	require.NoError(t, deleteAccount(ctx, cfg, id))
	require.NotContains(t, list(), "\ttenant\n")
	require.Contains(t, list(), fmt.Sprintf("%d\tactive\tbystander\n", other.ID))
}
