package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/audit"
)

// listAuditLog answers the account's audit entries, newest first, filtered by
// actor, action, target and time. The log has no write route.
func (s *Server) listAuditLog(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "audit-log")
	if err != nil {
		return err
	}
	f, err := auditFilter(r)
	if err != nil {
		return err
	}
	var before *int64
	if p.AfterID > 0 {
		before = &p.AfterID
	}
	recs, err := s.Audit.List(r.Context(), accountID(r), f, before, p.Limit+1)
	if err != nil {
		return err
	}
	recs, next := pageOf(r, "audit-log", p, recs, func(a audit.Record) cursor { return cursor{ID: a.ID} })
	out := make([]api.AuditEntry, 0, len(recs))
	for _, a := range recs {
		e := api.AuditEntry{Id: a.ID, Actor: api.Actor{Type: api.ActorType(a.Actor.Type), Id: a.Actor.ID, Label: a.Actor.Label},
			Action: a.Action, TargetType: a.TargetType, TargetId: a.TargetID, RequestId: a.RequestID,
			SourceAddress: a.SourceAddr, InChangeTx: a.InChangeTx, CreatedAt: a.CreatedAt}
		if a.Detail != nil {
			d := a.Detail
			e.Detail = &d
		}
		out = append(out, e)
	}
	return encode(w, http.StatusOK, api.AuditEntryPage{Data: out, NextCursor: next})
}

func auditFilter(r *http.Request) (audit.Filter, error) {
	q := r.URL.Query()
	var f audit.Filter
	str := func(name string) *string {
		if v := q.Get(name); v != "" {
			return &v
		}
		return nil
	}
	f.ActorType, f.Action, f.TargetType, f.TargetID = str("actor_type"), str("action"), str("target_type"), str("target_id")
	if v := q.Get("actor_id"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return f, apperr.Invalidf("/actor_id", "actor_id must be an integer")
		}
		f.ActorID = &id
	}
	for _, t := range []struct {
		name string
		into **time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := q.Get(t.name); v != "" {
			at, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return f, apperr.Invalidf("/"+t.name, "%s must be an RFC 3339 time", t.name)
			}
			*t.into = &at
		}
	}
	return f, nil
}
