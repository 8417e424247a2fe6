package httpapi

import (
	"net/http"
	"strconv"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/erasure"
	"github.com/sendonce/sendonce/internal/suppression"
)

// erasureDefaults builds the erasure service when the caller did not, and hands
// the erased-address hasher (on the unsubscribe key ring) to every way an address
// comes into an account, so an erased one comes back suppressed.
func (s *Server) erasureDefaults() {
	erased := suppression.NewErased(s.Unsubscribe.Signer().Ring())
	if s.Subscribers.Erased == nil {
		s.Subscribers.Erased = erased
	}
	if s.Transactional.Erased == nil {
		s.Transactional.Erased = erased
	}
	if s.Erasure == nil {
		s.Erasure = erasure.NewService(s.Pool, erased)
	}
	if s.DevInbox != nil && s.Erasure.Memory == nil {
		s.Erasure.Memory = s.DevInbox
	}
}

// erasureRetryAfter is the Retry-After of an erasure waiting for a send in flight:
// a row in flight is settled within a lease or a few heartbeats.
const erasureRetryAfter = 60

// eraseSubscriber answers POST /v1/subscribers/{id}/erase.
func (s *Server) eraseSubscriber(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	by := "api_key:" + strconv.FormatInt(apiKeyID(r), 10)
	res, err := s.Erasure.EraseSubscriber(r.Context(), accountID(r), id, by)
	if apperr.Is(err, apperr.Conflict) {
		w.Header().Set("Retry-After", strconv.Itoa(erasureRetryAfter))
	}
	if err != nil {
		return err
	}
	s.Logger.InfoContext(r.Context(), "subscriber erased", "account", accountID(r), "subscriber", id, "erasure", res.ID)
	return encode(w, http.StatusOK, toAPIErasure(res))
}

func toAPIErasure(e erasure.Result) api.Erasure {
	return api.Erasure{Id: e.ID, SubscriberId: e.SubscriberID, Status: api.ErasureStatus(e.Status),
		RequestedBy: e.RequestedBy, Counts: e.Counts, CreatedAt: e.CreatedAt, CompletedAt: e.CompletedAt}
}
