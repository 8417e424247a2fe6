// Package audit records who changed what: one entry per committed write of the
// tenant API, written in the transaction of the change. A request that may change
// something carries a Recorder in its context (httpapi attaches it to every write
// route); postgres.InTx runs the Recorder in every transaction of that context, so
// the first transaction of the request that commits carries the entry, and a
// transaction that rolls back takes its entry with it. No domain package of the
// tenant API writes the entry itself: a write cannot forget it by running in a
// transaction. The operator, who acts on accounts from outside them, writes its
// entries with Write in the transaction of each change (internal/operator).
package audit

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Entry is one write, as recorded.
type Entry struct {
	AccountID  int64
	Actor      access.Actor
	Action     string
	TargetType string
	// TargetID is the route's id, or what a create reports (SetTarget); empty
	// when neither names one (a batch).
	TargetID   string
	RequestID  string
	SourceAddr string
	// Detail is a small object of what the change was (never a secret).
	Detail map[string]any
}

// Recorder is the pending entry of one request.
type Recorder struct {
	mu      sync.Mutex
	entry   Entry
	written bool
}

type recorderKey struct{}

// Begin returns ctx carrying a Recorder for e: every transaction run under it
// (postgres.InTx) writes e before it commits, until one has committed.
func Begin(ctx context.Context, e Entry) (context.Context, *Recorder) {
	r := &Recorder{entry: e}
	ctx = context.WithValue(ctx, recorderKey{}, r)
	return postgres.WithTxHook(ctx, r), r
}

// SetTarget names the target of the request's entry when the route did not (the
// id a create made). It does nothing outside a recorded request.
func SetTarget(ctx context.Context, id string) {
	if r, ok := ctx.Value(recorderKey{}).(*Recorder); ok {
		r.mu.Lock()
		r.entry.TargetID = id
		r.mu.Unlock()
	}
}

// BeforeCommit writes the entry in tx, unless a transaction of the request has
// committed it already.
func (r *Recorder) BeforeCommit(ctx context.Context, tx pgx.Tx) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written {
		return nil
	}
	return insert(ctx, store.New(tx), r.entry, true)
}

// Committed marks the entry written.
func (r *Recorder) Committed() {
	r.mu.Lock()
	r.written = true
	r.mu.Unlock()
}

// Written reports whether a transaction of the request committed the entry.
func (r *Recorder) Written() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written
}

// Finish writes the entry of a request that succeeded without committing it in a
// transaction (a change made by one statement outside InTx), marked as written
// after the change rather than with it. It does nothing once written.
func (r *Recorder) Finish(ctx context.Context, db store.DBTX) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written {
		return nil
	}
	if err := insert(ctx, store.New(db), r.entry, false); err != nil {
		return err
	}
	r.written = true
	return nil
}

// Write records e in the transaction q runs in: the operator's actions on an
// account, which are no request of the tenant API (internal/operator).
func Write(ctx context.Context, q *store.Queries, e Entry) error {
	return insert(ctx, q, e, true)
}

func insert(ctx context.Context, q *store.Queries, e Entry, inTx bool) error {
	var detail []byte
	if len(e.Detail) > 0 {
		b, err := json.Marshal(e.Detail)
		if err != nil {
			return err
		}
		detail = b
	}
	var target *string
	if e.TargetID != "" {
		target = &e.TargetID
	}
	return q.AuditInsert(ctx, store.AuditInsertParams{AccountID: e.AccountID, ActorType: e.Actor.Type,
		ActorID: e.Actor.ID, ActorLabel: e.Actor.Label, Action: e.Action, TargetType: e.TargetType,
		TargetID: target, RequestID: e.RequestID, SourceAddr: e.SourceAddr, Detail: detail, InChangeTx: inTx})
}
