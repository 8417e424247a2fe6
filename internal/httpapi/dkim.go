package httpapi

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dkim"
)

func toAPIDkimKey(k dkim.KeyInfo) api.DkimKey {
	out := api.DkimKey{Id: k.ID, Domain: k.Domain, Selector: k.Selector, Algorithm: api.DkimKeyAlgorithm(k.Algorithm),
		Active: k.Active, ActivatedAt: k.ActivatedAt, CreatedAt: k.CreatedAt}
	out.Record.Type, out.Record.Name, out.Record.Value = "TXT", k.RecordName, k.RecordValue
	return out
}

// listDkimKeys answers GET /v1/domains/{domain}/dkim-keys.
func (s *Server) listDkimKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.Senders.DKIM().List(r.Context(), accountID(r), chi.URLParam(r, "domain"))
	if err != nil {
		return err
	}
	out := api.DkimKeyList{Data: make([]api.DkimKey, len(keys))}
	for i, k := range keys {
		out.Data[i] = toAPIDkimKey(k)
	}
	return encode(w, http.StatusOK, out)
}

// createDkimKey answers POST /v1/domains/{domain}/dkim-keys: 201, the key inactive.
func (s *Server) createDkimKey(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.DkimKeyCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	k, err := s.Senders.DKIM().Create(r.Context(), accountID(r), chi.URLParam(r, "domain"), unset(in.Selector), string(unset(in.Algorithm)))
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPIDkimKey(k))
}

// activateDkimKey answers POST /v1/domains/{domain}/dkim-keys/{id}/activate.
func (s *Server) activateDkimKey(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	k, err := s.Senders.DKIM().Activate(r.Context(), accountID(r), chi.URLParam(r, "domain"), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIDkimKey(k))
}

// deleteDkimKey answers DELETE /v1/domains/{domain}/dkim-keys/{id}.
func (s *Server) deleteDkimKey(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Senders.DKIM().Delete(r.Context(), accountID(r), chi.URLParam(r, "domain"), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// dkimKeyChecks looks each of the account's keys of domain up at its record's
// name and says whether the key published there is this one.
func (s *Server) dkimKeyChecks(ctx context.Context, keys []dkim.KeyInfo) []api.DomainCheckDkimKey {
	out := make([]api.DomainCheckDkimKey, len(keys))
	for i, k := range keys {
		c := api.DomainCheckDkimKey{Id: k.ID, Selector: k.Selector, Active: k.Active}
		recs, err := s.Domains.DKIMRecords(ctx, k.Selector, k.Domain)
		switch {
		case err != nil:
			c.Status, c.Detail = "unknown", "the lookup of "+k.RecordName+" failed: "+err.Error()
		case len(recs) == 0:
			c.Status, c.Detail = "missing", "no DKIM record at "+k.RecordName+": publish TXT \""+k.RecordValue+"\""
		default:
			c.Status, c.Detail = "mismatch", "the record at "+k.RecordName+" holds another key: publish TXT \""+k.RecordValue+"\" instead"
			for _, rec := range recs {
				if dkim.Published(rec, k.Algorithm, k.PublicKey) {
					c.Status, c.Detail = "match", "the record at "+k.RecordName+" carries this key"
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
func (s *Server) accountDkimKeys(ctx context.Context, accountID int64, domain string) ([]dkim.KeyInfo, string, error) {
	if _, err := s.Domains.Normalize(domain); err != nil {
		return nil, "", nil
	}
	keys, err := s.Senders.DKIM().List(ctx, accountID, domain)
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
