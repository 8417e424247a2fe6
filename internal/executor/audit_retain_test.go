package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
)

// Audit retention deletes the entries older than the retention, of every
// account, and keeps the recent ones; 0 keeps everything.
func TestAuditRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	a, b := f.account("a"), f.account("b")
	clk := newClock()
	for _, row := range []struct {
		account int64
		age     time.Duration
	}{{a, 400 * 24 * time.Hour}, {b, 370 * 24 * time.Hour}, {a, 10 * 24 * time.Hour}} {
		f.exec(`INSERT INTO audit_log (account_id, actor_type, actor_id, actor_label, action, target_type, request_id, source_addr, in_change_tx, created_at)
			VALUES ($1, 'key', 1, 'k', 'list.create', 'list', 'r', '127.0.0.1', true, $2)`, row.account, clk.Now().Add(-row.age))
	}
	keep, err := New(pool, newFake(true), Config{Now: clk.Now}, nil, nil)
	require.NoError(t, err)
	n, err := keep.retainAudit(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "0 keeps every entry")

	e, err := New(pool, newFake(true), Config{Now: clk.Now, AuditRetention: 365 * 24 * time.Hour}, nil, nil)
	require.NoError(t, err)
	n, err = e.retainAudit(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, n, "the two entries past a year, of both accounts")
	require.EqualValues(t, 1, f.int64(`SELECT count(*) FROM audit_log`))
	require.EqualValues(t, 1, f.int64(`SELECT count(*) FROM audit_log WHERE created_at > $1`, clk.Now().Add(-11*24*time.Hour)))
}
