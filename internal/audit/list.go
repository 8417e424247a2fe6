package audit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/store"
)

// Service reads the audit log. Nothing writes it but Recorder.
type Service struct{ pool *pgxpool.Pool }

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

// Record is one stored entry.
type Record struct {
	ID         int64
	Actor      access.Actor
	Action     string
	TargetType string
	TargetID   *string
	RequestID  string
	SourceAddr string
	Detail     map[string]any
	InChangeTx bool
	CreatedAt  time.Time
}

// Filter narrows a listing; every field is optional.
type Filter struct {
	ActorType  *string
	ActorID    *int64
	Action     *string
	TargetType *string
	TargetID   *string
	Since      *time.Time
	Until      *time.Time
}

// List returns up to limit of the account's entries matching f, newest first,
// with ids below beforeID when it is not nil.
func (s *Service) List(ctx context.Context, accountID int64, f Filter, beforeID *int64, limit int) ([]Record, error) {
	rows, err := store.New(s.pool).AuditList(ctx, store.AuditListParams{AccountID: accountID, BeforeID: beforeID,
		ActorType: f.ActorType, ActorID: f.ActorID, Action: f.Action, TargetType: f.TargetType, TargetID: f.TargetID,
		Since: f.Since, Until: f.Until, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(rows))
	for _, r := range rows {
		rec := Record{ID: r.ID, Actor: access.Actor{Type: r.ActorType, ID: r.ActorID, Label: r.ActorLabel},
			Action: r.Action, TargetType: r.TargetType, TargetID: r.TargetID, RequestID: r.RequestID,
			SourceAddr: r.SourceAddr, InChangeTx: r.InChangeTx, CreatedAt: r.CreatedAt}
		if len(r.Detail) > 0 {
			_ = json.Unmarshal(r.Detail, &rec.Detail)
		}
		out = append(out, rec)
	}
	return out, nil
}
