package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/internal/sender"
)

// createSender answers POST /v1/senders. Credentials are accepted and never
// returned: the response carries a masked hint.
func (s *Server) createSender(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[sender.Input](w, r, s.Config.MaxBodyBytes)
	if err != nil {
		return err
	}
	sn, err := s.Senders.Create(r.Context(), accountID(r), in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, sn)
}

// listSenders answers GET /v1/senders?limit=&cursor=.
func (s *Server) listSenders(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "senders")
	if err != nil {
		return err
	}
	rows, err := s.Senders.List(r.Context(), accountID(r), p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "senders", p, rows, func(x sender.Sender) cursor { return cursor{ID: x.ID} })
	if rows == nil {
		rows = []sender.Sender{}
	}
	return encode(w, http.StatusOK, map[string]any{"data": rows, "next_cursor": next})
}

// getSender answers GET /v1/senders/{id}.
func (s *Server) getSender(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	sn, err := s.Senders.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, sn)
}

// updateSender answers PATCH /v1/senders/{id}.
func (s *Server) updateSender(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[sender.Patch](w, r, s.Config.MaxBodyBytes)
	if err != nil {
		return err
	}
	sn, err := s.Senders.Update(r.Context(), accountID(r), id, in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, sn)
}

// deleteSender answers DELETE /v1/senders/{id}.
func (s *Server) deleteSender(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Senders.Delete(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// verifySender answers POST /v1/senders/{id}/verify: 200 with ok and, when the
// check failed, the step that failed and why.
func (s *Server) verifySender(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	res, err := s.Senders.Verify(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, res)
}
