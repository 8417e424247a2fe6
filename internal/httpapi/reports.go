package httpapi

import (
	"net/http"
	"strconv"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/report"
)

// campaignReport answers what happened to a campaign's messages and recipients.
func (s *Server) campaignReport(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	domains := report.DefaultDomains
	if v := r.URL.Query().Get("domains"); v != "" {
		if domains, err = strconv.Atoi(v); err != nil {
			return apperr.Invalidf("/domains", "domains must be an integer from 1 to %d", report.MaxDomains)
		}
	}
	rep, err := s.Reports.Campaign(r.Context(), accountID(r), id, domains)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIReport(rep))
}

func toAPIReport(rep report.Campaign) api.CampaignReport {
	c := rep.Stats.Counts
	fb := rep.Feedback
	out := api.CampaignReport{CampaignId: rep.Stats.CampaignID, Status: api.CampaignStatus(rep.Stats.Status),
		Audience: rep.Stats.Total, Sent: c["sent"], Failed: c["failed"], Unknown: c["unknown"],
		Suppressed: c["suppressed"], Pending: c["queued"] + c["sending"], Cancelled: c["cancelled"],
		Feedback: api.ReportFeedback{HardBounces: fb.HardBounces, SoftBounces: fb.SoftBounces, Complaints: fb.Complaints,
			Unsubscribes: fb.Unsubscribes()},
		Opens: toAPIEngagementCounts(rep.Opens), Clicks: toAPIEngagementCounts(rep.Clicks),
		Domains: make([]api.ReportDomain, 0, len(rep.Domains)), Links: make([]api.ReportLink, 0, len(rep.Links)),
	}
	out.Feedback.UnsubscribesBySource.OneClick = fb.UnsubOneClick
	out.Feedback.UnsubscribesBySource.Preferences = fb.UnsubPreferences
	out.Feedback.UnsubscribesBySource.Provider = fb.UnsubProvider
	// No provider reports delivery to sendonce: the rates are against sent.
	basis := out.Sent
	rate := func(n int64) *float64 {
		if basis == 0 {
			return nil
		}
		v := float64(n) / float64(basis)
		return &v
	}
	out.Rates = api.ReportRates{Basis: api.ReportRatesBasisSent, Denominator: basis, Bounce: rate(fb.HardBounces + fb.SoftBounces),
		Complaint: rate(fb.Complaints), Unsubscribe: rate(fb.Unsubscribes()), Open: rate(rep.Opens.PeopleUnique),
		Click: rate(rep.Clicks.PeopleUnique)}
	if rep.Opens.PeopleUnique > 0 {
		v := float64(rep.Clicks.PeopleUnique) / float64(rep.Opens.PeopleUnique)
		out.Rates.ClickToOpen = &v
	}
	for _, d := range rep.Domains {
		out.Domains = append(out.Domains, toAPIDomain(d))
	}
	out.OtherDomains = toAPIDomain(rep.Other)
	out.OtherDomains.Domain = "other"
	for _, l := range rep.Links {
		out.Links = append(out.Links, api.ReportLink{Index: l.Index, Url: l.URL, Clicks: toAPIEngagementCounts(l.Clicks)})
	}
	return out
}

func toAPIEngagementCounts(e report.Engagement) api.ReportEngagement {
	return api.ReportEngagement{Total: e.Total, Unique: e.Unique, People: e.People, PeopleUnique: e.PeopleUnique,
		Scanners: e.Total - e.People}
}

func toAPIDomain(d report.Domain) api.ReportDomain {
	return api.ReportDomain{Domain: d.Domain, Sent: d.Sent, Bounced: d.Bounced, Complained: d.Complained,
		Unsubscribed: d.Unsubbed, Opened: d.Opened, OpenedPeople: d.OpenedPeople, Clicked: d.Clicked,
		ClickedPeople: d.ClickedPeople}
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
	days, err := s.Reports.Analytics(r.Context(), accountID(r), from, to)
	if err != nil {
		return err
	}
	out := api.Analytics{From: openapi_types.Date{Time: dateOf(from)}, To: openapi_types.Date{Time: dateOf(to)},
		Days: make([]api.AnalyticsDay, len(days))}
	for i, d := range days {
		out.Days[i] = api.AnalyticsDay{Day: openapi_types.Date{Time: d.Day}, Kind: api.AnalyticsDayKind(d.Kind),
			Sent: d.Sent, HardBounces: d.HardBounces, SoftBounces: d.SoftBounces, Complaints: d.Complaints,
			Unsubscribes: d.Unsubscribes, OpenedPeople: d.OpenedPeople, ClickedPeople: d.ClickedPeople}
	}
	return encode(w, http.StatusOK, out)
}

func dateOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
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
