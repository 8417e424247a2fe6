package event

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// MaxBatch is the most per-recipient events one batched delivery carries.
const MaxBatch = 100

// MaxPayload bounds the body of a delivery (Standard Webhooks: under 20 KB); a
// batch closes before its events would pass it.
const MaxPayload = 18 << 10

// fanoutPick is how many events one fan-out transaction turns into deliveries.
const fanoutPick = 1000

// fanout turns the committed events past each enabled endpoint's cursor into
// deliveries, and reports how many events it read. Each endpoint is fanned out
// under its row lock by one replica at a time (SKIP LOCKED: the others move on), in
// transactions of at most fanoutPick events, so the cursor moves exactly as far as
// the deliveries it created.
func (w *Worker) fanout(ctx context.Context) (int, error) {
	ids, err := store.New(w.pool).EventEndpointsBehind(ctx)
	if err != nil {
		return 0, fmt.Errorf("endpoints behind: %w", err)
	}
	total := 0
	for _, id := range ids {
		for {
			n, err := w.fanoutOne(ctx, id)
			if err != nil {
				return total, err
			}
			total += n
			if n < fanoutPick {
				break
			}
		}
	}
	return total, nil
}

func (w *Worker) fanoutOne(ctx context.Context, endpointID int64) (int, error) {
	picked := 0
	err := postgres.InTx(ctx, w.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		ep, err := q.EventEndpointLockForFanout(ctx, endpointID)
		if postgres.NoRows(err) {
			return nil // disabled, deleted, or another replica has it
		}
		if err != nil {
			return err
		}
		evs, err := q.EventFanoutPick(ctx, store.EventFanoutPickParams{AccountID: ep.AccountID,
			CursorXid: ep.CursorXid, CursorID: ep.CursorID, Lim: fanoutPick})
		if err != nil || len(evs) == 0 {
			return err
		}
		picked = len(evs)
		p := group(evs, ep.EventTypes, int(ep.BatchSize))
		if len(p.EventIds) > 0 {
			p.AccountID, p.EndpointID = ep.AccountID, ep.ID
			if err := q.EventDeliveryInsertGroups(ctx, p); err != nil {
				return err
			}
		}
		last := evs[len(evs)-1]
		return q.EventEndpointAdvance(ctx, store.EventEndpointAdvanceParams{
			CursorXid: last.Xid, CursorID: last.ID, ID: ep.ID})
	})
	if err != nil {
		return 0, fmt.Errorf("fan out endpoint %d: %w", endpointID, err)
	}
	return picked, nil
}

// group assigns the events an endpoint wants to deliveries: one each, except
// per-recipient events of a batching endpoint, which share a delivery up to
// batchSize events or MaxPayload bytes.
func group(evs []store.EventFanoutPickRow, types []string, batchSize int) store.EventDeliveryInsertGroupsParams {
	var p store.EventDeliveryInsertGroupsParams
	g := int32(0)
	open, openCount, openBytes := false, 0, 0
	for _, e := range evs {
		if e.Type == EndpointPing || (len(types) > 0 && !slices.Contains(types, e.Type)) {
			continue
		}
		batch := batchSize > 1 && perRecipient(e.Type)
		size := int(e.Size) + 200 // the envelope: id, type, timestamp
		if batch && open && openCount < batchSize && openBytes+size <= MaxPayload {
			openCount++
			openBytes += size
		} else {
			g++
			open, openCount, openBytes = batch, 1, size
		}
		p.EventIds = append(p.EventIds, e.ID)
		p.Groups = append(p.Groups, g)
		p.Batches = append(p.Batches, batch)
	}
	return p
}
