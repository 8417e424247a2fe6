package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
)

// notIdempotent refuses an Idempotency-Key on a route whose answer holds a secret:
// honouring the key would mean storing that answer. A client that counts on the
// key learns it here, rather than by finding a second secret made.
func (s *Server) notIdempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, sent := r.Header["Idempotency-Key"]; sent {
			writeError(w, r, s.Logger, apperr.Invalidf("/Idempotency-Key",
				"this route does not take an Idempotency-Key: its answer holds a secret that is never stored for a replay"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func toAPIKey(k account.Key) api.APIKey {
	return api.APIKey{Id: k.ID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt,
		RevokedAt: k.RevokedAt, Role: api.APIKeyRole(k.Role)}
}

// listAPIKeys answers the account's keys, newest first; tokens are never stored, so
// never shown.
func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "api-keys")
	if err != nil {
		return err
	}
	var before *int64
	if p.AfterID > 0 {
		before = &p.AfterID
	}
	keys, err := s.Accounts.Keys(r.Context(), accountID(r), before, p.Limit+1)
	if err != nil {
		return err
	}
	keys, next := pageOf(r, "api-keys", p, keys, func(k account.Key) cursor { return cursor{ID: k.ID} })
	out := make([]api.APIKey, 0, len(keys))
	for _, k := range keys {
		out = append(out, toAPIKey(k))
	}
	return encode(w, http.StatusOK, api.APIKeyPage{Data: out, NextCursor: next})
}

// createAPIKey makes a named key; the answer is the only place its token appears.
func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.APIKeyCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	role := ""
	if in.Role != nil {
		role = string(*in.Role)
	}
	k, token, err := s.Accounts.NewKey(r.Context(), accountID(r), in.Name, role)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return encode(w, http.StatusCreated, api.APIKeyCreated{Id: k.ID, Name: k.Name, Prefix: k.Prefix,
		CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt, Role: api.APIKeyRole(k.Role), Token: token})
}

// revokeAPIKey revokes one of the account's keys; another account's id is a 404.
func (s *Server) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	k, err := s.Accounts.RevokeKey(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIKey(k))
}

// readOnlyAllowed are the routes other than GET that a read-only key may call:
// minting a stream token (to watch events) and the previews, which change nothing.
var readOnlyAllowed = map[string]bool{
	"POST /v1/events/stream-tokens":  true,
	"POST /v1/segments/preview":      true,
	"POST /v1/templates/preview":     true,
	"POST /v1/templates/{id}/render": true,
}

// readOnlyGuard refuses, before anything runs, every request of a read-only key (or
// of a dashboard session signed in with one) that could change something. It sits
// in the route groups, after chi has matched the route, so it knows the pattern.
func (s *Server) readOnlyGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if readOnly(r) && !safeMethod(r.Method) && !readOnlyAllowed[r.Method+" "+routePattern(r)] {
			writeProblem(w, r, Problem{Type: problemBase + "read-only-key", Title: "Forbidden", Status: http.StatusForbidden,
				Detail: "this API key is read-only: it may read, not change anything (create a full key to make changes)"})
			return
		}
		next.ServeHTTP(w, r)
	})
}
