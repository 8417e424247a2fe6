package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/logging"
	"github.com/sendonce/sendonce/internal/operator"
)

// operatorAccounts is the listing name of the operator's account cursor (bound to
// account 0: no tenant's).
const operatorAccounts = "operator-accounts"

// operatorOnly is the one gate of /operator/v1: the operator key, as a bearer
// token, and nothing else. A tenant key, a dashboard session or no credential is
// 401 (the operator routes are no tenant's, so the tenant permission check of
// access.Routes does not apply), and failures count toward the client address's
// failed authentications like any other.
func (s *Server) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr, now := s.clientAddr(r), time.Now()
		if delay := s.authFails.wait(addr, now); delay > 0 {
			s.tooManyRequests(w, r, delay, "too many failed authentications from this address; retry after %d s")
			return
		}
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || !s.operatorKey.Matches(strings.TrimSpace(token)) {
			s.authFails.fail(addr, now)
			msg := "the operator key is required: Authorization: Bearer <operator key>"
			if !s.operatorKey.Enabled() {
				msg = "the operator API is off: set SENDONCE_OPERATOR_KEY_HASH (sendonce operator key)"
			}
			writeError(w, r, s.Logger, apperr.New(apperr.Unauthorized, "%s", msg))
			return
		}
		// Every action is recorded in the account's audit log with this request's
		// id and address (operator.Service writes it with the change).
		ctx := operator.WithOrigin(r.Context(), operator.Origin{RequestID: logging.RequestID(r.Context()),
			SourceAddr: addr})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// logAction writes an operator action that took effect to the process log: the
// account's audit log holds it too, but a deleted account's log goes with it.
func (s *Server) logAction(r *http.Request, action string, accountID int64) {
	s.Logger.InfoContext(r.Context(), "operator action", "action", action, "account_id", accountID,
		"source_addr", s.clientAddr(r))
}

func toAPIOperatorAccount(a operator.Account) api.OperatorAccount {
	status := api.OperatorAccountStatusActive
	if a.SuspendedAt != nil {
		status = api.OperatorAccountStatusSuspended
	}
	return api.OperatorAccount{Id: a.ID, Name: a.Name, PublicId: a.PublicID, CreatedAt: a.CreatedAt,
		Status: status, SuspendedAt: a.SuspendedAt, Quotas: api.Quotas{Subscribers: a.Quotas.Subscribers,
			Senders: a.Quotas.Senders, MessagesPerDay: a.Quotas.MessagesPerDay}}
}

func quotaUpdate(q api.Quotas) operator.QuotaUpdate {
	return operator.QuotaUpdate{SetSubscribers: true, SetSenders: true, SetMessagesPerDay: true,
		Quotas: operator.Quotas{Subscribers: q.Subscribers, Senders: q.Senders, MessagesPerDay: q.MessagesPerDay}}
}

func (s *Server) operatorListAccounts(w http.ResponseWriter, r *http.Request) error {
	limit := defaultLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		p, err := parsePageLimit(v)
		if err != nil {
			return err
		}
		limit = p
	}
	var after int64
	if v := r.URL.Query().Get("cursor"); v != "" {
		c, err := decodeCursor(v, 0, operatorAccounts)
		if err != nil {
			return err
		}
		after = c.ID
	}
	rows, err := s.Operator.List(r.Context(), after, int32(limit+1))
	if err != nil {
		return err
	}
	out := api.OperatorAccountPage{Data: []api.OperatorAccount{}}
	if len(rows) > limit {
		rows = rows[:limit]
		next := encodeCursor(cursor{Listing: operatorAccounts, ID: rows[len(rows)-1].ID})
		out.NextCursor = &next
	}
	for _, a := range rows {
		out.Data = append(out.Data, toAPIOperatorAccount(a))
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) operatorCreateAccount(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.OperatorAccountCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	var q operator.QuotaUpdate
	if in.Quotas != nil {
		q = quotaUpdate(*in.Quotas)
	}
	a, token, err := s.Operator.Create(r.Context(), in.Name, q)
	if err != nil {
		return err
	}
	s.logAction(r, "account.create", a.ID)
	return encode(w, http.StatusCreated, api.OperatorAccountCreated{Account: toAPIOperatorAccount(a), ApiKey: token})
}

func (s *Server) operatorGetAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	a, err := s.Operator.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIOperatorAccount(a))
}

func (s *Server) operatorSetQuotas(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.Quotas](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	a, err := s.Operator.SetQuotas(r.Context(), id, quotaUpdate(in))
	if err != nil {
		return err
	}
	s.logAction(r, "account.quotas", id)
	return encode(w, http.StatusOK, toAPIOperatorAccount(a))
}

func (s *Server) operatorSuspendAccount(w http.ResponseWriter, r *http.Request) error {
	return s.operatorTransition(w, r, "account.suspend", s.Operator.Suspend)
}

func (s *Server) operatorResumeAccount(w http.ResponseWriter, r *http.Request) error {
	return s.operatorTransition(w, r, "account.resume", s.Operator.Resume)
}

func (s *Server) operatorTransition(w http.ResponseWriter, r *http.Request, action string,
	change func(ctx context.Context, id int64) (operator.Account, error)) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	a, err := change(r.Context(), id)
	if err != nil {
		return err
	}
	s.logAction(r, action, id)
	return encode(w, http.StatusOK, toAPIOperatorAccount(a))
}

func (s *Server) operatorDeleteAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Operator.Delete(r.Context(), id); err != nil {
		return err
	}
	s.logAction(r, "account.delete", id)
	w.WriteHeader(http.StatusAccepted)
	return nil
}
