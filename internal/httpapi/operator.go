package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/logging"
)

// Operator manages accounts as tenants behind the operator key (operator.API).
type Operator interface {
	// KeyEnabled reports whether an operator key is configured; KeyMatches, in
	// constant time, whether token is it.
	KeyEnabled() bool
	KeyMatches(token string) bool
	// WithOrigin returns ctx whose actions are recorded in the account's audit
	// log as coming from the request id and the source address.
	WithOrigin(ctx context.Context, requestID, sourceAddr string) context.Context
	List(ctx context.Context, after int64, limit int32) ([]api.OperatorAccount, error)
	// Create makes an account and its first API key (quotas nil: the defaults).
	Create(ctx context.Context, name string, quotas *api.Quotas) (a api.OperatorAccount, apiKey string, err error)
	Get(ctx context.Context, id int64) (api.OperatorAccount, error)
	SetQuotas(ctx context.Context, id int64, q api.Quotas) (api.OperatorAccount, error)
	Suspend(ctx context.Context, id int64) (api.OperatorAccount, error)
	Resume(ctx context.Context, id int64) (api.OperatorAccount, error)
	Delete(ctx context.Context, id int64) error
}

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
		if !strings.EqualFold(scheme, "Bearer") || !s.Operator.KeyMatches(strings.TrimSpace(token)) {
			s.authFails.fail(addr, now)
			msg := "the operator key is required: Authorization: Bearer <operator key>"
			if !s.Operator.KeyEnabled() {
				msg = "the operator API is off: set SENDONCE_OPERATOR_KEY_HASH (sendonce operator key)"
			}
			writeError(w, r, s.Logger, apperr.New(apperr.Unauthorized, "%s", msg))
			return
		}
		// Every action is recorded in the account's audit log with this request's
		// id and address (the operator service writes it with the change).
		ctx := s.Operator.WithOrigin(r.Context(), logging.RequestID(r.Context()), addr)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// logAction writes an operator action that took effect to the process log: the
// account's audit log holds it too, but a deleted account's log goes with it.
func (s *Server) logAction(r *http.Request, action string, accountID int64) {
	s.Logger.InfoContext(r.Context(), "operator action", "action", action, "account_id", accountID,
		"source_addr", s.clientAddr(r))
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
	out := api.OperatorAccountPage{Data: rows}
	if len(rows) > limit {
		out.Data = rows[:limit]
		next := encodeCursor(cursor{Listing: operatorAccounts, ID: out.Data[len(out.Data)-1].Id})
		out.NextCursor = &next
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) operatorCreateAccount(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.OperatorAccountCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	a, token, err := s.Operator.Create(r.Context(), in.Name, in.Quotas)
	if err != nil {
		return err
	}
	s.logAction(r, "account.create", a.Id)
	return encode(w, http.StatusCreated, api.OperatorAccountCreated{Account: a, ApiKey: token})
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
	return encode(w, http.StatusOK, a)
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
	a, err := s.Operator.SetQuotas(r.Context(), id, in)
	if err != nil {
		return err
	}
	s.logAction(r, "account.quotas", id)
	return encode(w, http.StatusOK, a)
}

func (s *Server) operatorSuspendAccount(w http.ResponseWriter, r *http.Request) error {
	return s.operatorTransition(w, r, "account.suspend", s.Operator.Suspend)
}

func (s *Server) operatorResumeAccount(w http.ResponseWriter, r *http.Request) error {
	return s.operatorTransition(w, r, "account.resume", s.Operator.Resume)
}

func (s *Server) operatorTransition(w http.ResponseWriter, r *http.Request, action string,
	change func(ctx context.Context, id int64) (api.OperatorAccount, error)) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	a, err := change(r.Context(), id)
	if err != nil {
		return err
	}
	s.logAction(r, action, id)
	return encode(w, http.StatusOK, a)
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
