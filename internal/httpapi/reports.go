package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
)

// Reports reads campaign reports and account analytics (report.API).
type Reports interface {
	Campaign(ctx context.Context, accountID, id int64, domains string) (api.CampaignReport, error)
	Analytics(ctx context.Context, accountID int64, from, to time.Time) (api.Analytics, error)
}

// campaignReport answers what happened to a campaign's messages and recipients.
func (s *Server) campaignReport(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	rep, err := s.Reports.Campaign(r.Context(), accountID(r), id, r.URL.Query().Get("domains"))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, rep)
}

// analytics answers the account's counts per day and kind of sending.
func (s *Server) analytics(w http.ResponseWriter, r *http.Request) error {
	to := time.Now().UTC()
	if v := r.URL.Query().Get("to"); v != "" {
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return apperr.Invalidf("/to", "to must be a date, YYYY-MM-DD")
		}
		to = t
	}
	from := to.AddDate(0, 0, -29)
	if v := r.URL.Query().Get("from"); v != "" {
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return apperr.Invalidf("/from", "from must be a date, YYYY-MM-DD")
		}
		from = t
	}
	out, err := s.Reports.Analytics(r.Context(), accountID(r), from, to)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, out)
}

// retryFailed queues a sent campaign's failed sends once more (once per campaign).
func (s *Server) retryFailed(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	c, n, err := s.Campaigns.RetryFailed(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.RetryFailedResult{Requeued: n, Campaign: toAPICampaign(c)})
}

// duplicateCampaign copies a campaign, whatever its status, as a new draft.
func (s *Server) duplicateCampaign(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	c, err := s.Campaigns.Duplicate(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPICampaign(c))
}
