package httpapi

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
)

// DKIMKeys keeps the accounts' DKIM signing keys in api types (dkim.API).
type DKIMKeys interface {
	List(ctx context.Context, accountID int64, domain string) ([]api.DkimKey, error)
	Create(ctx context.Context, accountID int64, domain string, in api.DkimKeyCreate) (api.DkimKey, error)
	Activate(ctx context.Context, accountID int64, domain string, id int64) (api.DkimKey, error)
	Delete(ctx context.Context, accountID int64, domain string, id int64) error
	// Published reports whether a TXT record found at key's record name carries
	// key.
	Published(record string, key api.DkimKey) bool
}

// listDkimKeys answers GET /v1/domains/{domain}/dkim-keys.
func (s *Server) listDkimKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.DKIM.List(r.Context(), accountID(r), chi.URLParam(r, "domain"))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.DkimKeyList{Data: keys})
}

// createDkimKey answers POST /v1/domains/{domain}/dkim-keys: 201, the key inactive.
func (s *Server) createDkimKey(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.DkimKeyCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	k, err := s.DKIM.Create(r.Context(), accountID(r), chi.URLParam(r, "domain"), in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, k)
}

// activateDkimKey answers POST /v1/domains/{domain}/dkim-keys/{id}/activate.
func (s *Server) activateDkimKey(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	k, err := s.DKIM.Activate(r.Context(), accountID(r), chi.URLParam(r, "domain"), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, k)
}

// deleteDkimKey answers DELETE /v1/domains/{domain}/dkim-keys/{id}.
func (s *Server) deleteDkimKey(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.DKIM.Delete(r.Context(), accountID(r), chi.URLParam(r, "domain"), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// dkimKeyChecks looks each of the account's keys of domain up at its record's
// name and says whether the key published there is this one.
func (s *Server) dkimKeyChecks(ctx context.Context, keys []api.DkimKey) []api.DomainCheckDkimKey {
	out := make([]api.DomainCheckDkimKey, len(keys))
	for i, k := range keys {
		c := api.DomainCheckDkimKey{Id: k.Id, Selector: k.Selector, Active: k.Active}
		recs, err := s.Domains.DKIMRecords(ctx, k.Selector, k.Domain)
		switch {
		case err != nil:
			c.Status, c.Detail = "unknown", "the lookup of "+k.Record.Name+" failed: "+err.Error()
		case len(recs) == 0:
			c.Status, c.Detail = "missing", "no DKIM record at "+k.Record.Name+": publish TXT \""+k.Record.Value+"\""
		default:
			c.Status, c.Detail = "mismatch", "the record at "+k.Record.Name+" holds another key: publish TXT \""+k.Record.Value+"\" instead"
			for _, rec := range recs {
				if s.DKIM.Published(rec, k) {
					c.Status, c.Detail = "match", "the record at "+k.Record.Name+" carries this key"
					break
				}
			}
		}
		out[i] = c
	}
	return out
}

// accountDkimKeys returns the account's keys of domain and the active one's
// selector ("" when none); a domain that is not public has none.
func (s *Server) accountDkimKeys(ctx context.Context, accountID int64, domain string) ([]api.DkimKey, string, error) {
	if _, err := s.Domains.Normalize(domain); err != nil {
		return nil, "", nil
	}
	keys, err := s.DKIM.List(ctx, accountID, domain)
	if err != nil && !apperr.Is(err, apperr.Invalid) {
		return nil, "", err
	}
	active := ""
	for _, k := range keys {
		if k.Active {
			active = k.Selector
		}
	}
	return keys, active, nil
}
