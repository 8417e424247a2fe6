package httpapi

import (
	"net/http"
	"slices"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/access"
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
		RevokedAt: k.RevokedAt, Role: api.APIKeyRole(k.Role), ListIds: listIDsOut(k.ListIDs),
		Permissions: toAPIPermissions(account.KeyPermissions(k.Role, k.Permissions))}
}

func toAPIPermissions(set access.Set) []api.Permission {
	out := make([]api.Permission, 0, len(set))
	for _, p := range set.List() {
		out = append(out, api.Permission(p))
	}
	return out
}

func listIDsOut(ids []int64) *[]int64 {
	if ids == nil {
		return nil
	}
	return &ids
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
	spec := account.KeySpec{}
	if in.Role != nil {
		spec.Role = string(*in.Role)
	}
	if in.Permissions != nil {
		spec.Permissions = make([]string, 0, len(*in.Permissions))
		for _, p := range *in.Permissions {
			spec.Permissions = append(spec.Permissions, string(p))
		}
	}
	if in.ListIds != nil {
		spec.ListIDs = append([]int64{}, *in.ListIds...)
	}
	grants, err := spec.Grants()
	if err != nil {
		return err
	}
	// No escalation: a key is given only what its maker holds, and no wider
	// list reach.
	p, _ := principalOf(r)
	if !p.Permissions.Covers(grants) {
		return &apperr.Error{Code: apperr.Forbidden, Extra: map[string]any{"reason": "escalation"},
			Message: "a key may be given only permissions its maker holds"}
	}
	if p.ListIDs != nil { // a list-restricted maker hands on at most its lists
		if spec.ListIDs == nil {
			spec.ListIDs = slices.Clone(p.ListIDs)
		}
		for _, id := range spec.ListIDs {
			if !slices.Contains(p.ListIDs, id) {
				return listRestricted()
			}
		}
	}
	k, token, err := s.Accounts.NewKey(r.Context(), accountID(r), in.Name, spec)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	a := toAPIKey(k)
	return encode(w, http.StatusCreated, api.APIKeyCreated{Id: a.Id, Name: a.Name, Prefix: a.Prefix,
		CreatedAt: a.CreatedAt, LastUsedAt: a.LastUsedAt, RevokedAt: a.RevokedAt, Role: a.Role,
		Permissions: a.Permissions, ListIds: a.ListIds, Token: token})
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
