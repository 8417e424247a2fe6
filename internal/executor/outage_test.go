package executor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/provider"
)

// TestDatabaseOutageMidCampaign cuts every connection of two running executors to
// the database three times during a send (pg_terminate_backend, as a restart of
// PostgreSQL would). The executors log, back off, reconnect and finish: every
// recipient is sent, and a replay happens only for rows whose acknowledgement was
// lost, which the idempotent provider drops.
func TestDatabaseOutageMidCampaign(t *testing.T) {
	t.Parallel()
	const n = 4000
	url := dbtest.URL(t)
	admin := openPool(t, url, 2)
	f := fixture{t, admin}
	acct := f.account("a")
	f.subscribers(acct, "r", n, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Second))

	p := newFake(true)
	p.fail = func(provider.Message, int) error { time.Sleep(time.Millisecond); return nil }
	es := make([]*Executor, 2)
	for i := range es {
		es[i] = newExecutor(t, openPool(t, url, 4), p, Config{Tick: 200 * time.Millisecond, Workers: 8,
			BatchSize: 20, Lease: 2 * time.Second, Maintenance: 200 * time.Millisecond, Poll: 20 * time.Millisecond})
	}
	shareFinished(es...)
	for _, e := range es {
		runUntil(t, e)
	}
	for cut := range 3 {
		// Wait for progress, then cut.
		want := (cut + 1) * n / 5
		require.Eventually(t, func() bool {
			_, accepted, _ := p.snapshot()
			return len(accepted) >= want
		}, time.Minute, 5*time.Millisecond)
		// Client connections only: an autovacuum worker on this database (the outbox's
		// inserts make one likely) may not be terminated by a non-superuser.
		killed := f.int64(`SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()
			  AND backend_type = 'client backend') k`)
		t.Logf("cut %d: terminated %d connections", cut+1, killed)
	}
	waitSent(t, f, es[0], c)
	_, accepted, _ := p.snapshot()
	require.Len(t, accepted, n)
	replays := 0
	for _, k := range accepted {
		replays += k - 1
	}
	t.Logf("replays after lost acknowledgements: %d", replays)
	require.Equal(t, map[string]int{"sent": n}, f.counts(c))
}
