package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/subscriber"
)

func toAPIList(l subscriber.List) api.List {
	return api.List{Id: l.ID, Name: l.Name, Description: l.Description, MemberCount: l.MemberCount,
		Optin: api.ListOptin(l.Optin), Public: l.Public, Language: l.Language, OptinFromEmail: l.OptinFromEmail,
		OptinFromName: l.OptinFromName, OptinTemplateId: l.OptinTemplateID,
		CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

func (s *Server) listLists(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "lists")
	if err != nil {
		return err
	}
	rows, err := s.Subscribers.Lists(r.Context(), accountID(r), p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "lists", p, rows, func(x subscriber.List) cursor { return cursor{ID: x.ID} })
	out := api.ListPage{Data: make([]api.List, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = toAPIList(x)
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) createList(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.ListCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	l, err := s.Subscribers.CreateList(r.Context(), accountID(r), in.Name, optional.Value(in.Description), subscriber.ListOptin{
		Optin: string(optional.Value(in.Optin)), Public: optional.Value(in.Public), Language: optional.Value(in.Language),
		OptinFromEmail: optional.Value(in.OptinFromEmail), OptinFromName: optional.Value(in.OptinFromName), OptinTemplateID: in.OptinTemplateId})
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPIList(l))
}

func (s *Server) getList(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	l, err := s.Subscribers.GetList(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIList(l))
}

func (s *Server) updateList(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, nulls, err := decodeUpdate[api.ListUpdate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	p := subscriber.ListPatch{Name: in.Name, Description: in.Description, Optin: (*string)(in.Optin), Public: in.Public,
		Language: in.Language, OptinFromEmail: in.OptinFromEmail, OptinFromName: in.OptinFromName,
		OptinTemplateID: in.OptinTemplateId, ClearOptinTemplate: nulls["optin_template_id"]}
	l, err := s.Subscribers.UpdateList(r.Context(), accountID(r), id, p)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIList(l))
}

func (s *Server) deleteList(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Subscribers.DeleteList(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) addListMembers(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.MemberIDs](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	n, err := s.Subscribers.AddMembers(r.Context(), accountID(r), id, in.SubscriberIds)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.MemberChange{Changed: n})
}

func (s *Server) removeListMembers(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.MemberIDs](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	n, err := s.Subscribers.RemoveMembers(r.Context(), accountID(r), id, in.SubscriberIds)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.MemberChange{Changed: n})
}
