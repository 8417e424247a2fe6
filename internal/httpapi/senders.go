package httpapi

import (
	"context"
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/campaign"
)

// Senders manages the accounts' senders and sender pools in api types
// (sender.API); KindFor is the Service's own.
type Senders interface {
	Create(ctx context.Context, accountID int64, in api.SenderCreate) (api.Sender, error)
	List(ctx context.Context, accountID, afterID int64, limit int) ([]api.Sender, error)
	Get(ctx context.Context, accountID, id int64) (api.Sender, error)
	Update(ctx context.Context, accountID, id int64, in api.SenderUpdate) (api.Sender, error)
	Delete(ctx context.Context, accountID, id int64) error
	Verify(ctx context.Context, accountID, id int64) (api.SenderVerifyResult, error)
	CreatePool(ctx context.Context, accountID int64, in api.SenderPoolCreate) (api.SenderPool, error)
	ListPools(ctx context.Context, accountID, afterID int64, limit int) ([]api.SenderPool, error)
	GetPool(ctx context.Context, accountID, id int64) (api.SenderPool, error)
	UpdatePool(ctx context.Context, accountID, id int64, in api.SenderPoolUpdate) (api.SenderPool, error)
	DeletePool(ctx context.Context, accountID, id int64) error
	// KindFor is the type of sender id (of the account's default sender when id
	// is nil, "" when there is none); found is false when id is not the account's.
	KindFor(ctx context.Context, accountID int64, senderID *int64) (kind string, found bool, err error)
}

// SenderRoutes picks the sender of a test send (campaign.Routes).
type SenderRoutes interface {
	// Resolve is the sender id of a campaign's senderID (else the account's
	// default); ok is false when the deployment's provider sends.
	Resolve(ctx context.Context, accountID int64, senderID *int64) (id int64, ok bool, err error)
	// Sender is sender id's provider.
	Sender(ctx context.Context, accountID, id int64) (campaign.Sender, error)
}

// createSender answers POST /v1/senders. Credentials are accepted and never
// returned: the response carries a masked hint.
func (s *Server) createSender(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SenderCreate](w, r, s.opts.MaxBodyBytes)
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
	rows, next := pageOf(r, "senders", p, rows, func(x api.Sender) cursor { return cursor{ID: x.Id} })
	return encode(w, http.StatusOK, api.SenderPage{Data: rows, NextCursor: next})
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
	in, err := decode[api.SenderUpdate](w, r, s.opts.MaxBodyBytes)
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
