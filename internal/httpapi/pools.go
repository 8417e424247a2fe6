package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
)

// createSenderPool answers POST /v1/sender-pools.
func (s *Server) createSenderPool(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SenderPoolCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	p, err := s.Senders.CreatePool(r.Context(), accountID(r), in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, p)
}

// listSenderPools answers GET /v1/sender-pools?limit=&cursor=.
func (s *Server) listSenderPools(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "sender-pools")
	if err != nil {
		return err
	}
	rows, err := s.Senders.ListPools(r.Context(), accountID(r), p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "sender-pools", p, rows, func(x api.SenderPool) cursor { return cursor{ID: x.Id} })
	return encode(w, http.StatusOK, api.SenderPoolPage{Data: rows, NextCursor: next})
}

// getSenderPool answers GET /v1/sender-pools/{id}.
func (s *Server) getSenderPool(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	p, err := s.Senders.GetPool(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, p)
}

// updateSenderPool answers PATCH /v1/sender-pools/{id}.
func (s *Server) updateSenderPool(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.SenderPoolUpdate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	p, err := s.Senders.UpdatePool(r.Context(), accountID(r), id, in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, p)
}

// deleteSenderPool answers DELETE /v1/sender-pools/{id}.
func (s *Server) deleteSenderPool(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Senders.DeletePool(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
