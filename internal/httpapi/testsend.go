package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
)

// testCampaign renders the campaign for up to 10 addresses and sends it now. Results
// are per address; the cause of a failure is logged, its class answered.
func (s *Server) testCampaign(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.TestSendRequest](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	// The campaign's sender (else the account default, else the deployment's provider).
	c, err := s.Campaigns.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	via := s.TestSender
	if sid, ok, err := s.Routes.Resolve(r.Context(), accountID(r), c.SenderID); err != nil {
		return err
	} else if ok {
		p, err := s.Routes.Sender(r.Context(), accountID(r), sid)
		if err != nil {
			return apperr.New(apperr.Conflict, "sender %d cannot be used: %v", sid, err)
		}
		via = p
	}
	results, err := s.Campaigns.Test(r.Context(), accountID(r), id, in.Emails,
		via)
	if err != nil {
		return err
	}
	out := api.TestSendResult{Results: make([]api.TestSendOutcome, len(results))}
	for i, x := range results {
		o := api.TestSendOutcome{Email: x.Email, Sent: x.Sent}
		if x.Sent {
			o.ProviderMessageId = &x.ProviderMessageID
		} else {
			o.Error = &results[i].Error
			if x.Err() != nil {
				s.Logger.WarnContext(r.Context(), "campaign test send failed", "campaign", id, "err", x.Err())
			}
		}
		out.Results[i] = o
	}
	return encode(w, http.StatusOK, out)
}
