package erasure_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/erasure"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/suppression"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/token"
)

// An erasure works in bounded batches: a person with more rows than one batch is
// erased whole, while no transaction changes more of a table than one batch (a
// chunk of the person's send rows, a window of events or event batches). A trigger logs every
// changed row with its transaction.
func TestEraseInBoundedBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	acc, _, err := account.NewService(pool).Create(ctx, "erasing")
	require.NoError(t, err)
	fx := testfactory.New(pool)
	ada := fx.Subscriber(t, acc.ID, testfactory.Subscriber{Email: "Ada@Example.com", Name: "Ada", Status: "confirmed"})
	bob := fx.Subscriber(t, acc.ID, testfactory.Subscriber{Email: "bob@example.com", Name: "Bob", Status: "confirmed"})
	const campaigns, events = 12, 15
	for i := range campaigns {
		c := fx.Campaign(t, acc.ID, testfactory.Campaign{Name: fmt.Sprint("c", i), FromEmail: "n@example.com"})
		for _, p := range []struct {
			id    int64
			email string
		}{{ada, "Ada@Example.com"}, {bob, "bob@example.com"}} {
			fx.Send(t, acc.ID, c, p.id, testfactory.Send{Email: p.email, Status: "sent"})
		}
	}
	for i := range events {
		require.NoError(t, event.Emit(ctx, pool, acc.ID, event.SubscriberCreated, map[string]any{"email": "Ada@Example.com", "n": i}))
		require.NoError(t, event.Emit(ctx, pool, acc.ID, event.SubscriberCreated, map[string]any{"email": "bob@example.com", "n": i}))
	}
	// Acknowledgements' event batches (00840_event_batches.sql), as SendAckMany
	// writes them: each with two of Ada's outcomes and one of Bob's.
	const batches = 3
	for i := range batches {
		exec(`INSERT INTO event_batches (first_id, account_id, occurred_at, n, types, data)
			VALUES (nextval('events_id_seq'), $1, now(), 3, '{send.sent,send.failed}', ARRAY[
				jsonb_build_object('status', 'sent', 'email', 'Ada@Example.com', 'n', $2::int),
				jsonb_build_object('status', 'sent', 'email', 'bob@example.com', 'n', $2::int),
				jsonb_build_object('status', 'failed', 'email', 'ada@example.com', 'error', '550 ada@example.com unknown')])`,
			acc.ID, i)
	}

	exec(`CREATE TABLE erasure_test_log (xid xid8 NOT NULL, tbl text NOT NULL)`)
	exec(`CREATE FUNCTION erasure_test_log() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN INSERT INTO erasure_test_log VALUES (pg_current_xact_id(), TG_TABLE_NAME); RETURN NULL; END $$`)
	for _, tbl := range []string{"sends", "events", "event_batches", "subscribers"} {
		exec(fmt.Sprintf(`CREATE TRIGGER erasure_test_log AFTER UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION erasure_test_log()`, tbl))
	}

	ring, err := token.NewRing([]string{"k1:erasure-test-secret-0123456789"})
	require.NoError(t, err)
	svc := erasure.NewService(pool, suppression.NewErased(ring))
	const window, chunk = 5, 4
	svc.Window, svc.Chunk = window, chunk
	res, err := svc.EraseSubscriber(ctx, acc.ID, ada, "api_key:1")
	require.NoError(t, err)
	require.Equal(t, "completed", res.Status)
	require.EqualValues(t, campaigns, res.Counts["sends"])
	require.EqualValues(t, events+2*batches, res.Counts["events"])

	// Erased whole: the address is nowhere in the three tables; Bob is untouched.
	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		require.NoError(t, pool.QueryRow(ctx, sql, args...).Scan(&n))
		return n
	}
	require.Zero(t, count(`SELECT count(*) FROM sends WHERE email ILIKE '%ada%' OR email_lower LIKE '%ada%'`))
	require.Zero(t, count(`SELECT count(*) FROM all_events WHERE data::text ILIKE '%ada@example.com%'`))
	require.Zero(t, count(`SELECT count(*) FROM subscribers WHERE email_lower = 'ada@example.com'`))
	require.Equal(t, campaigns, count(`SELECT count(*) FROM sends WHERE email = 'bob@example.com'`))
	require.Equal(t, events+batches, count(`SELECT count(*) FROM all_events WHERE data::text LIKE '%bob@example.com%'`))
	require.Equal(t, 3*batches, count(`SELECT sum(n) FROM event_batches`))
	require.Equal(t, 3*batches, count(`SELECT count(*) FROM all_events WHERE type LIKE 'send.%'`))

	// In batches: Ada's sends changed in at least campaigns/chunk transactions, none
	// changing more than a chunk; no transaction changed more events than a window holds.
	perTx := func(tbl string) (txs, most int) {
		t.Helper()
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*), coalesce(max(n), 0) FROM (
			SELECT count(*) AS n FROM erasure_test_log WHERE tbl = $1 GROUP BY xid) x`, tbl).Scan(&txs, &most))
		return txs, most
	}
	txs, most := perTx("sends")
	require.GreaterOrEqual(t, txs, (campaigns+chunk-1)/chunk, "Ada's %d sends in chunks of %d", campaigns, chunk)
	require.LessOrEqual(t, most, chunk, "send rows changed by one transaction")
	txs, most = perTx("events")
	require.GreaterOrEqual(t, txs, events/window, "Ada's %d events over windows of %d ids", events, window)
	require.LessOrEqual(t, most, window, "event rows changed by one transaction")
	txs, most = perTx("event_batches")
	require.Equal(t, batches, txs, "a window of batches")
	require.Equal(t, 1, most, "event batches changed by one transaction")
}
