package httpapi

import (
	"context"
	"net/http"

	"github.com/sendonce/sendonce/api"
)

// BounceMailboxes keeps the accounts' bounce mailbox settings (bounce.API).
type BounceMailboxes interface {
	Get(ctx context.Context, accountID int64) (api.BounceMailbox, error)
	Put(ctx context.Context, accountID int64, in api.BounceMailboxInput) (api.BounceMailbox, error)
	Delete(ctx context.Context, accountID int64) error
}

// getBounceMailbox answers GET /v1/bounce-mailbox.
func (s *Server) getBounceMailbox(w http.ResponseWriter, r *http.Request) error {
	m, err := s.Bounces.Get(r.Context(), accountID(r))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, m)
}

// putBounceMailbox answers PUT /v1/bounce-mailbox.
func (s *Server) putBounceMailbox(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.BounceMailboxInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	m, err := s.Bounces.Put(r.Context(), accountID(r), in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, m)
}

// deleteBounceMailbox answers DELETE /v1/bounce-mailbox.
func (s *Server) deleteBounceMailbox(w http.ResponseWriter, r *http.Request) error {
	if err := s.Bounces.Delete(r.Context(), accountID(r)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
