package httpapi

import (
	"net/http"
	"sync"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/provider"
)

// testSender returns the sender of campaign test messages: Deps.TestSender, or the
// configured provider built once, on the first test send.
func testSender(d Deps) func() (campaign.Sender, error) {
	if d.TestSender != nil {
		return func() (campaign.Sender, error) { return d.TestSender, nil }
	}
	return sync.OnceValues(func() (campaign.Sender, error) {
		return provider.New(d.Config.Providers, d.Logger)
	})
}

// testCampaign renders the campaign for up to 10 addresses and sends it now. Results
// are per address; the cause of a failure is logged, its class answered.
func (s *Server) testCampaign(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.TestSendRequest](w, r, s.Config.MaxBodyBytes)
	if err != nil {
		return err
	}
	sender, err := s.testSender()
	if err != nil {
		return err
	}
	results, err := s.Campaigns.Test(r.Context(), accountID(r), id, in.Emails, sender)
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
			s.Logger.WarnContext(r.Context(), "campaign test send failed", "campaign", id, "err", x.Err())
		}
		out.Results[i] = o
	}
	return encode(w, http.StatusOK, out)
}
