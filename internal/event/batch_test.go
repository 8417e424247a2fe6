package event

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// writeBatch writes an event batch as an acknowledgement does (SendAckMany's
// outcome_batches): one nextval of events' id sequence, the elements' payloads
// in order, their type 'send.' || status.
func writeBatch(ctx context.Context, t *testing.T, tx pgx.Tx, accountID int64, statuses ...string) {
	t.Helper()
	data := make([]string, len(statuses))
	var types []string
	for i, s := range statuses {
		b, err := json.Marshal(map[string]any{"status": s, "send_id": fmt.Sprint(accountID, "-", i), "email": "r@example.com"})
		require.NoError(t, err)
		data[i] = string(b)
		if !slices.Contains(types, "send."+s) {
			types = append(types, "send."+s)
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO event_batches (first_id, account_id, occurred_at, n, types, data)
		VALUES (nextval('events_id_seq'), $1, now(), $2, $3, $4::text[]::jsonb[])`, accountID, len(statuses), types, data)
	require.NoError(t, err)
}

type ref struct {
	ID   int64
	Type string
	Data string
}

// TestReadersMergeRowsAndBatches: an account's events written as rows and as
// batches (several in one transaction, one of 1,024, another tenant's batches
// between them) read through every reader exactly as all_events holds them, in
// (xid, id) order: paged with limits that cut batches anywhere, with type filters
// that match some elements of a batch or none, newest first, by id for a
// delivery, fanned out to an endpoint, exported. Another tenant's ids are not found.
func TestReadersMergeRowsAndBatches(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	other, _, err := account.NewService(e.pool).Create(ctx, "other tenant")
	require.NoError(t, err)
	big := make([]string, 1024)
	for i := range big {
		big[i] = []string{"sent", "sent", "failed", "unknown"}[i%4]
	}
	txs := []func(tx pgx.Tx){
		func(tx pgx.Tx) {
			require.NoError(t, Emit(ctx, tx, e.account, CampaignStarted, map[string]any{"campaign_id": 1}))
			writeBatch(ctx, t, tx, e.account, "sent", "failed", "sent")
			writeBatch(ctx, t, tx, other.ID, "sent", "sent")
			require.NoError(t, Emit(ctx, tx, e.account, CampaignPaused, map[string]any{"campaign_id": 1}))
			writeBatch(ctx, t, tx, e.account, "unknown", "sent")
		},
		func(tx pgx.Tx) { writeBatch(ctx, t, tx, e.account, "sent") },
		func(tx pgx.Tx) {
			writeBatch(ctx, t, tx, e.account, big...)
			writeBatch(ctx, t, tx, e.account, "failed", "failed", "sent", "sent", "sent")
		},
		func(tx pgx.Tx) {
			require.NoError(t, Emit(ctx, tx, e.account, CampaignSent, map[string]any{"campaign_id": 1}))
		},
		func(tx pgx.Tx) { writeBatch(ctx, t, tx, other.ID, "failed") },
		func(tx pgx.Tx) { writeBatch(ctx, t, tx, e.account, "sent", "sent") },
	}
	for _, f := range txs {
		require.NoError(t, postgres.InTx(ctx, e.pool, func(tx pgx.Tx) error { f(tx); return nil }))
	}
	all := allEvents(ctx, t, e, e.account)
	require.Len(t, all, 1+3+1+2+1+1024+5+1+2)
	var theirs []int64
	for _, r := range allEvents(ctx, t, e, other.ID) {
		theirs = append(theirs, r.ID)
	}
	require.Len(t, theirs, 3)
	eventually(t, func() bool {
		evs, err := e.svc.Events(ctx, e.account, Position{}, nil, 2000)
		require.NoError(t, err)
		return len(evs) == len(all)
	})

	filters := [][]string{nil, {SendFailed}, {SendUnknown, CampaignSent}, {CampaignStarted}, {SendSuppressed}}
	for _, types := range filters {
		want := filtered(all, types)
		for _, limit := range []int{1, 2, 3, 7, 100, 500, 1000} {
			var got []ref
			var at Position
			for pages := 0; ; pages++ {
				require.Less(t, pages, 3000)
				evs, err := e.svc.Events(ctx, e.account, at, types, limit)
				require.NoError(t, err)
				require.LessOrEqual(t, len(evs), limit)
				if len(evs) == 0 {
					break
				}
				// A page is short only at the end: every reader reads on while one is full.
				if len(evs) < limit {
					require.Equal(t, len(want), len(got)+len(evs), "types %v limit %d: a short page before the end", types, limit)
				}
				for _, ev := range evs {
					got = append(got, ref{ID: ev.Position.ID, Type: ev.Type, Data: string(ev.Data)})
				}
				at = evs[len(evs)-1].Position
			}
			require.Equal(t, want, got, "types %v limit %d", types, limit)
		}
		for _, limit := range []int{1, 4, 1500} {
			evs, err := e.svc.Newest(ctx, e.account, types, limit)
			require.NoError(t, err)
			var got []ref
			for _, ev := range evs {
				got = append(got, ref{ID: ev.Position.ID, Type: ev.Type, Data: string(ev.Data)})
			}
			rev := slices.Clone(want)
			slices.Reverse(rev)
			require.Equal(t, rev[:min(limit, len(rev))], got, "newest: types %v limit %d", types, limit)
		}
	}

	// By id, as a delivery reads its events: ours found, theirs and ids between
	// windows not.
	q := store.New(e.pool)
	var ids []int64
	for _, r := range all {
		ids = append(ids, r.ID)
	}
	asked := append(append(slices.Clone(ids), theirs...), ids[len(ids)-1]+1, all[5].ID+2, 0, -5)
	rows, err := q.EventGetMany(ctx, store.EventGetManyParams{AccountID: e.account, Ids: asked})
	require.NoError(t, err)
	var byID []ref
	for _, r := range rows {
		byID = append(byID, ref{ID: r.ID, Type: r.Type, Data: string(r.Data)})
	}
	byOrder := slices.Clone(all)
	slices.SortFunc(byOrder, func(a, b ref) int { return int(a.ID - b.ID) })
	require.Equal(t, byOrder, byID)

	// Export, in reading order, pages of 3.
	var exported []ref
	var ax, ai int64
	for {
		rows, err := q.ExportEvents(ctx, store.ExportEventsParams{AccountID: e.account, AfterXid: ax, AfterID: ai, Lim: 3})
		require.NoError(t, err)
		for _, r := range rows {
			exported = append(exported, ref{ID: r.ID, Type: r.Type, Data: string(r.Data)})
			ax, ai = r.Xid, r.ID
		}
		if len(rows) < 3 {
			break
		}
	}
	require.Equal(t, all, exported)

	// Fan-out to an endpoint of the account: each event in one delivery, in order;
	// a batching endpoint puts per-recipient events together.
	for _, size := range []int{1, 7} {
		rcv := newReceiver(t)
		ep, _ := e.endpoint(rcv.URL, EndpointInput{BatchSize: &size})
		rewound, err := e.svc.RedeliverSince(ctx, e.account, ep.ID, time.Time{})
		require.NoError(t, err)
		require.True(t, rewound)
		w := e.worker()
		for {
			n, err := w.fanoutOne(ctx, ep.ID)
			require.NoError(t, err)
			if n == 0 {
				break
			}
		}
		dr, err := e.pool.Query(ctx, `SELECT unnest(event_ids) FROM event_deliveries WHERE endpoint_id = $1 ORDER BY id`, ep.ID)
		require.NoError(t, err)
		delivered, err := pgx.CollectRows(dr, pgx.RowTo[int64])
		require.NoError(t, err)
		require.Equal(t, ids, delivered, "batch size %d", size)
	}
}

// allEvents is what all_events holds of the account, in reading order.
func allEvents(ctx context.Context, t *testing.T, e *env, accountID int64) []ref {
	t.Helper()
	rows, err := e.pool.Query(ctx, `SELECT id, type, data::text FROM all_events WHERE account_id = $1 ORDER BY xid, id`, accountID)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ref])
	require.NoError(t, err)
	return out
}

func filtered(all []ref, types []string) []ref {
	var out []ref
	for _, r := range all {
		if len(types) == 0 || slices.Contains(types, r.Type) {
			out = append(out, r)
		}
	}
	return out
}

// TestFanoutFindsEndpointsBehindOnBatchesAlone: an endpoint whose account's only
// events past its cursor are acknowledgements' batches is behind, so the fan-out
// delivers them without waiting for an event row to come after them (a tenant
// that only sends messages writes nothing else). A batch the cursor has read to
// its end, or one into which the cursor has read, leaves the endpoint behind only
// by its unread elements.
func TestFanoutFindsEndpointsBehindOnBatchesAlone(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	ep, _ := e.endpoint(rcv.URL, EndpointInput{})
	w := e.worker()
	fanned := func() int {
		t.Helper()
		n, err := w.fanout(ctx)
		require.NoError(t, err)
		return n
	}
	batch := func(statuses ...string) {
		require.NoError(t, postgres.InTx(ctx, e.pool, func(tx pgx.Tx) error {
			writeBatch(ctx, t, tx, e.account, statuses...)
			return nil
		}))
	}
	require.Zero(t, fanned(), "nothing written yet")
	batch("sent", "failed", "sent")
	eventually(t, func() bool { return fanned() == 3 })
	require.Zero(t, fanned(), "the cursor is at the batch's last element")

	// Another tenant's batch past the cursor leaves this endpoint where it is.
	other, _, err := account.NewService(e.pool).Create(ctx, "other tenant")
	require.NoError(t, err)
	require.NoError(t, postgres.InTx(ctx, e.pool, func(tx pgx.Tx) error {
		writeBatch(ctx, t, tx, other.ID, "sent", "sent")
		return nil
	}))
	eventually(t, func() bool {
		evs, err := e.svc.Events(ctx, other.ID, Position{}, nil, 10)
		require.NoError(t, err)
		return len(evs) == 2
	})
	behind, err := store.New(e.pool).EventEndpointsBehind(ctx)
	require.NoError(t, err)
	require.Empty(t, behind, "another tenant's batch")

	// The cursor set into a batch: only its unread elements are behind.
	batch("sent", "sent", "sent", "unknown")
	var first int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT max(first_id) FROM event_batches WHERE account_id = $1`, e.account).Scan(&first))
	_, err = e.pool.Exec(ctx, `UPDATE event_endpoints SET (cursor_xid, cursor_id) =
		(SELECT xid, first_id + 1 FROM event_batches WHERE first_id = $2) WHERE id = $1`, ep.ID, first)
	require.NoError(t, err)
	eventually(t, func() bool { return fanned() == 2 })
	require.Zero(t, fanned())
	var delivered int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM event_deliveries d, unnest(d.event_ids) WHERE d.endpoint_id = $1`, ep.ID).Scan(&delivered))
	require.Equal(t, 5, delivered)
}
