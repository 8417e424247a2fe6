package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// Erasures erase people (erasure.API).
type Erasures interface {
	EraseSubscriber(ctx context.Context, accountID, subscriberID int64, requestedBy string) (api.Erasure, error)
	EraseAddress(ctx context.Context, accountID int64, email, requestedBy string) (api.Erasure, error)
	// InFlight tells whether an erasure's error says a send to the person is in a
	// provider's hands (retry in a minute).
	InFlight(err error) bool
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
	s.Logger.InfoContext(r.Context(), "subscriber erased", "account", accountID(r), "subscriber", id, "erasure", res.Id)
	return encode(w, http.StatusOK, res)
}

// personalData answers the preference page's requests about the person's data,
// authenticated by the link's signed token like the page itself, and always by a
// POST (a mail scanner's GET changes nothing): erase-ask shows what an erasure
// does and asks to confirm, erase erases (the subscriber the token names, or for a
// message's link the address), export sends a copy of the data to the address.
func (s *Server) personalData(w http.ResponseWriter, r *http.Request, token, action string) error {
	ctx := r.Context()
	switch action {
	case "erase-ask":
		p, err := s.Unsubscribe.Preferences(ctx, token)
		if err != nil {
			return unsubscribeError(w, err)
		}
		writeHTML(w, unsubscribe.DataPage(p, true, false, false, false))
		return nil
	case "export":
		p, err := s.Unsubscribe.Preferences(ctx, token)
		if err != nil {
			return unsubscribeError(w, err)
		}
		if err := s.mailExport(ctx, p.Recipient); err != nil {
			return err
		}
		s.Logger.InfoContext(ctx, "data export mailed", "account", p.AccountID, "subscriber", p.SubscriberID,
			"message", p.MessageID)
		writeHTML(w, unsubscribe.DataPage(p, false, false, true, false))
		return nil
	}
	rec, err := s.Unsubscribe.Lookup(ctx, token)
	if err != nil {
		return unsubscribeError(w, err)
	}
	var res api.Erasure
	if rec.Kind == unsubscribe.KindMessage {
		res, err = s.Erasure.EraseAddress(ctx, rec.AccountID, rec.Email, "self-service")
	} else {
		res, err = s.Erasure.EraseSubscriber(ctx, rec.AccountID, rec.SubscriberID, "self-service")
	}
	if s.Erasure.InFlight(err) {
		p, perr := s.Unsubscribe.Preferences(ctx, token)
		if perr != nil {
			return unsubscribeError(w, perr)
		}
		w.Header().Set("Retry-After", strconv.Itoa(erasureRetryAfter))
		writeHTML(w, unsubscribe.DataPage(p, false, false, false, true))
		return nil
	}
	if err != nil {
		return err
	}
	s.Logger.InfoContext(ctx, "subscriber erased", "account", rec.AccountID, "erasure", res.Id, "requested_by", "self-service")
	writeHTML(w, unsubscribe.ErasedPage(rec.Language))
	return nil
}
