package export_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/export"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// blockingWriter holds the export open after its first row until released.
type blockingWriter struct {
	first   chan struct{}
	release chan struct{}
	rows    int
}

func (b *blockingWriter) Row([]any) error {
	b.rows++
	if b.rows == 1 {
		close(b.first)
		<-b.release
	}
	return nil
}
func (b *blockingWriter) Flush() error { return nil }

// An export open for as long as its reader is slow holds back no account's
// events: its read-only transaction has no transaction id, and the event readers'
// horizon is the oldest running transaction id. The control, a transaction that
// has one, does hold them back (so the test can tell the two apart).
func TestExportDoesNotHoldBackEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	accounts := account.NewService(pool)
	a, _, err := accounts.Create(ctx, "exporter")
	require.NoError(t, err)
	b, _, err := accounts.Create(ctx, "other")
	require.NoError(t, err)
	fx := testfactory.New(pool)
	for i := range 5 {
		fx.Subscriber(t, a.ID, testfactory.Subscriber{Email: "p" + string(rune('a'+i)) + "@example.com"})
	}
	visible := func(typ string) bool {
		rows, err := store.New(pool).EventListAfter(ctx, store.EventListAfterParams{AccountID: b.ID, Types: []string{typ}, Lim: 10})
		require.NoError(t, err)
		return len(rows) == 1
	}

	svc := export.NewService(pool)
	svc.Batch = 2
	w := &blockingWriter{first: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := svc.Stream(ctx, export.Request{AccountID: a.ID, Kind: export.Subscribers, Membership: []string{"subscribed"}}, w)
		done <- err
	}()
	<-w.first // the export's transaction is open, its snapshot taken
	require.NoError(t, event.Emit(ctx, pool, b.ID, event.SubscriberCreated, map[string]any{"n": 1}))
	require.Eventually(t, func() bool { return visible(event.SubscriberCreated) }, 5*time.Second, 20*time.Millisecond,
		"another account's event is readable while an export is open")
	close(w.release)
	require.NoError(t, <-done)
	require.Equal(t, 5, w.rows)

	// The control: a transaction holding an xid holds the event back.
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, `SELECT pg_current_xact_id()`)
	require.NoError(t, err)
	require.NoError(t, event.Emit(ctx, pool, b.ID, event.SubscriberConfirmed, map[string]any{"n": 2}))
	time.Sleep(200 * time.Millisecond)
	require.False(t, visible(event.SubscriberConfirmed), "a transaction with an xid holds the readers back")
	require.NoError(t, tx.Rollback(ctx))
	require.True(t, visible(event.SubscriberConfirmed))
}

// CSV cells a spreadsheet would run as formulas get a leading apostrophe; the
// file is RFC 4180 (CRLF, quoted where needed) and reads back as written.
func TestCSVFormulaSafe(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w, err := export.NewWriter(export.CSV, &buf, []string{"a", "b"})
	require.NoError(t, err)
	cells := []string{"=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "\tx", "\rx", "plain, \"quoted\"", "é"}
	for _, c := range cells {
		require.NoError(t, w.Row([]any{c, int64(7)}))
	}
	require.NoError(t, w.Flush())
	require.True(t, strings.HasPrefix(buf.String(), "a,b\r\n"))
	require.Contains(t, buf.String(), "\"'\rx\",7\r\n", "a carriage return is quoted (Go's reader drops it on reading back)")
	recs, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	want := []string{"'=HYPERLINK(\"http://x\")", "'+1", "'-2", "'@SUM(A1)", "'\tx", "'\rx", "plain, \"quoted\"", "é"}
	for i, c := range want {
		if c == "'\rx" {
			continue
		}
		require.Equal(t, c, recs[i+1][0], "row %d", i)
	}
}

// An export reads each row once: every batch continues the index's order from
// where the last stopped, even when the planner, its statistics stale after a
// bulk import, would rather fetch the rest of the account and sort it for each
// batch (which made a large export quadratic: a million rows read 200 times).
func TestExportReadsEachRowOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	a, _, err := account.NewService(pool).Create(ctx, "bulk")
	require.NoError(t, err)
	const n = 3000
	testfactory.New(pool).Subscribers(t, a.ID, "p", n, "")
	read := func() int64 {
		_, err := pool.Exec(ctx, `SELECT pg_stat_force_next_flush()`)
		require.NoError(t, err)
		var r int64
		require.NoError(t, pool.QueryRow(ctx, `SELECT pg_stat_clear_snapshot() IS NULL,
			coalesce(seq_tup_read, 0) + (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes i WHERE i.relid = t.relid)::bigint
			FROM pg_stat_user_tables t WHERE relname = 'subscribers'`).Scan(new(bool), &r))
		return r
	}
	before := read()
	svc := export.NewService(pool)
	svc.Batch = 100
	w, err := export.NewWriter(export.NDJSON, io.Discard, export.Columns[export.Subscribers])
	require.NoError(t, err)
	rows, err := svc.Stream(ctx, export.Request{AccountID: a.ID, Kind: export.Subscribers, Membership: []string{"subscribed"}}, w)
	require.NoError(t, err)
	require.EqualValues(t, n, rows)
	// A backend reports its reads when its transaction ends, or up to 10 s later
	// when it reported less than a second before (PGSTAT_IDLE_INTERVAL).
	require.Eventually(t, func() bool { return read()-before >= n }, 15*time.Second, 100*time.Millisecond)
	got := read() - before
	require.LessOrEqual(t, got, int64(n+n/10), "rows read from subscribers for an export of %d in batches of 100", n)
}

// An events export's statement is not compiled: its merge of rows and batches
// must sort, which the export's own setting (ExportReadInOrder) prices past
// jit_above_cost, so without JIT off each batch would compile its plan.
func TestExportEventsIsNotCompiled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.URL(t)
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.MaxConns = 1 // the export's prepared statement is on the connection EXPLAIN runs on
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	a, _, err := account.NewService(pool).Create(ctx, "events")
	require.NoError(t, err)
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		return event.Emit(ctx, tx, a.ID, event.CampaignStarted, map[string]any{"campaign_id": 1})
	}))
	w, err := export.NewWriter(export.NDJSON, io.Discard, export.Columns[export.Events])
	require.NoError(t, err)
	rows, err := export.NewService(pool).Stream(ctx, export.Request{AccountID: a.ID, Kind: export.Events}, w)
	require.NoError(t, err)
	require.EqualValues(t, 1, rows)

	var plan []string
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := store.New(tx).ExportReadInOrder(ctx); err != nil {
			return err
		}
		var stmt string
		if err := tx.QueryRow(ctx, `SELECT name FROM pg_prepared_statements WHERE starts_with(statement, '-- name: ExportEvents ')`).Scan(&stmt); err != nil {
			return err
		}
		r, err := tx.Query(ctx, "EXPLAIN EXECUTE "+pgx.Identifier{stmt}.Sanitize()+fmt.Sprintf("(%d, 0, 0, %d)", a.ID, export.Batch))
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(r, pgx.RowTo[string])
		return err
	}))
	text := strings.Join(plan, "\n")
	require.Contains(t, text, "Sort", "the merge sorts (else the test proves nothing)")
	require.NotContains(t, text, "JIT:", "plan:\n%s", text)
}
