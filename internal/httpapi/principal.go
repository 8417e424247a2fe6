package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/audit"
	"github.com/sendonce/sendonce/internal/logging"
)

// principal is who a tenant request acts as and what it may do: set once by
// authenticate (an API key, or a dashboard session) and read by authorize, the
// audit entry and the handlers that honour a key's list restriction.
type principal struct {
	AccountID   int64
	Permissions access.Set
	Actor       access.Actor
	// ListIDs are the lists the caller may act on; nil means every list.
	ListIDs []int64
}

type principalKey struct{}

// principalForRole is the principal of a person (or anything else that holds a
// role) acting in an account: the role's permissions, every list. An unknown role
// gets no permission at all.
func principalForRole(accountID int64, role string, actor access.Actor) principal {
	perms, _ := access.RolePermissions(role)
	return principal{AccountID: accountID, Permissions: perms, Actor: actor}
}

// withPrincipal returns ctx carrying p: its account for every tenant handler
// (accountID), its actor for the domain packages (access.ActorFrom).
func withPrincipal(ctx context.Context, p principal) context.Context {
	if p.Permissions == nil {
		p.Permissions = access.Set{}
	}
	ctx = context.WithValue(ctx, principalKey{}, p)
	ctx = context.WithValue(ctx, accountKey{}, p.AccountID)
	return access.WithActor(ctx, p.Actor)
}

// principalOf returns the request's principal; false before authenticate.
func principalOf(r *http.Request) (principal, bool) {
	p, ok := r.Context().Value(principalKey{}).(principal)
	return p, ok
}

// ruleOf is the route table's rule for the matched route (HEAD is GET's).
func ruleOf(r *http.Request) (access.Rule, bool) {
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	rule, ok := access.Routes[method+" "+routePattern(r)]
	return rule, ok
}

// authorize enforces the route table (access.Routes) before anything else of the
// route runs: no body is read, no Idempotency-Key claimed. A route missing from
// the table is refused for everyone (fail closed), as is a caller without the
// route's permission (403 naming it), and a list-restricted key on another list's
// /v1/lists/{id} routes. It sits in the route groups, after chi has matched the
// route, so it knows the pattern.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rule, ok := ruleOf(r)
		p, authed := principalOf(r)
		switch {
		case !ok || rule.Permission == "":
			writeError(w, r, s.Logger, apperr.New(apperr.PermissionDenied, "no permission is defined for this route, so nobody may call it"))
			return
		case !authed || !p.Permissions.Has(rule.Permission):
			writeError(w, r, s.Logger, permissionDenied(rule.Permission))
			return
		}
		if p.ListIDs != nil && strings.HasPrefix(routePattern(r), "/v1/lists/{id}") {
			id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
			if err == nil && !slices.Contains(p.ListIDs, id) {
				writeError(w, r, s.Logger, listRestricted())
				return
			}
		}
		if rule.Target == "list" && p.ListIDs != nil && r.Method == http.MethodPost && routePattern(r) == "/v1/lists" {
			writeError(w, r, s.Logger, listRestricted())
			return
		}
		// A campaign aimed at lists the key was not given is not the key's to
		// change, approve or test.
		if p.ListIDs != nil && rule.Target == "campaign" && rule.Action != "" && chi.URLParam(r, "id") != "" {
			if id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64); err == nil {
				c, err := s.Campaigns.Get(r.Context(), p.AccountID, id)
				if err == nil {
					err = checkLists(r, c.ListIDs)
				}
				if err != nil {
					writeError(w, r, s.Logger, err)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func permissionDenied(p access.Permission) error {
	return &apperr.Error{Code: apperr.PermissionDenied, Extra: map[string]any{"missing_permission": string(p)},
		Message: "this caller lacks the permission " + string(p) + " (docs/teams.md lists what each role may do)"}
}

func listRestricted() error {
	return &apperr.Error{Code: apperr.Forbidden, Extra: map[string]any{"reason": "list_restricted"},
		Message: "this API key may act only on its lists (list_ids), and this request names or reaches another, or every subscriber"}
}

// checkLists refuses, for a list-restricted caller, a request aimed at lists it
// was not given; no lists at all means every subscriber, which it was not given
// either.
func checkLists(r *http.Request, ids []int64) error {
	p, _ := principalOf(r)
	if p.ListIDs == nil {
		return nil
	}
	if len(ids) == 0 {
		return listRestricted()
	}
	for _, id := range ids {
		if !slices.Contains(p.ListIDs, id) {
			return listRestricted()
		}
	}
	return nil
}

// recordAudit gives every write route (a rule with an Action) an audit entry:
// it is written by the first transaction of the request that commits
// (audit.Begin hooks postgres.InTx), and when the route answers 2xx without any
// transaction having written it (a change made outside InTx), just before the
// answer goes out, marked in_change_tx=false. It runs after authorize and the
// idempotency claim: a refused request or a replayed answer changes nothing and
// records nothing.
func (s *Server) recordAudit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rule, _ := ruleOf(r)
		p, ok := principalOf(r)
		if rule.Action == "" || !ok {
			next.ServeHTTP(w, r)
			return
		}
		target := chi.URLParam(r, "id")
		if target == "" {
			target = chi.URLParam(r, "email")
		}
		if rule.Target == "account" {
			target = strconv.FormatInt(p.AccountID, 10)
		}
		ctx, rec := audit.Begin(r.Context(), audit.Entry{AccountID: p.AccountID, Actor: p.Actor, Action: rule.Action,
			TargetType: rule.Target, TargetID: target, RequestID: logging.RequestID(r.Context()), SourceAddr: s.clientAddr(r)})
		r = r.WithContext(ctx)
		next.ServeHTTP(&auditWriter{ResponseWriter: w, finish: func(status int) {
			if status >= 200 && status < 300 {
				if err := rec.Finish(context.WithoutCancel(ctx), s.Pool); err != nil {
					s.Logger.ErrorContext(ctx, "audit entry not written", "action", rule.Action, "err", err)
				}
			}
		}}, r)
	})
}

// auditWriter runs finish with the status once, before the first byte of the
// answer goes out, so a client that sees a 2xx finds its audit entry.
type auditWriter struct {
	http.ResponseWriter
	finish func(status int)
	done   bool
}

func (a *auditWriter) WriteHeader(status int) {
	if !a.done && status >= 200 {
		a.done = true
		a.finish(status)
	}
	a.ResponseWriter.WriteHeader(status)
}

func (a *auditWriter) Write(b []byte) (int, error) {
	if !a.done {
		a.WriteHeader(http.StatusOK)
	}
	return a.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (deadlines, flushes).
func (a *auditWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

func (a *auditWriter) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
