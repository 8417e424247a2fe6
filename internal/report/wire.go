package report

import (
	"context"
	"strconv"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// Campaign reads the report of the account's campaign id (Service.Campaign);
// domains is the query's value, "" for DefaultDomains.
func (a API) Campaign(ctx context.Context, accountID, id int64, domains string) (api.CampaignReport, error) {
	n := DefaultDomains
	if domains != "" {
		var err error
		if n, err = strconv.Atoi(domains); err != nil {
			return api.CampaignReport{}, apperr.Invalidf("/domains", "domains must be an integer from 1 to %d", MaxDomains)
		}
	}
	rep, err := a.Service.Campaign(ctx, accountID, id, n)
	if err != nil {
		return api.CampaignReport{}, err
	}
	return toAPIReport(rep), nil
}

// Analytics reads the account's counts per day and kind of sending from from to to
// (Service.Analytics).
func (a API) Analytics(ctx context.Context, accountID int64, from, to time.Time) (api.Analytics, error) {
	days, err := a.Service.Analytics(ctx, accountID, from, to)
	if err != nil {
		return api.Analytics{}, err
	}
	out := api.Analytics{From: openapi_types.Date{Time: dateOf(from)}, To: openapi_types.Date{Time: dateOf(to)},
		Days: make([]api.AnalyticsDay, len(days))}
	for i, d := range days {
		out.Days[i] = api.AnalyticsDay{Day: openapi_types.Date{Time: d.Day}, Kind: api.AnalyticsDayKind(d.Kind),
			Sent: d.Sent, HardBounces: d.HardBounces, SoftBounces: d.SoftBounces, Complaints: d.Complaints,
			Unsubscribes: d.Unsubscribes, OpenedPeople: d.OpenedPeople, ClickedPeople: d.ClickedPeople}
	}
	return out, nil
}

func dateOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func toAPIReport(rep Campaign) api.CampaignReport {
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

func toAPIEngagementCounts(e Engagement) api.ReportEngagement {
	return api.ReportEngagement{Total: e.Total, Unique: e.Unique, People: e.People, PeopleUnique: e.PeopleUnique,
		Scanners: e.Total - e.People}
}

func toAPIDomain(d Domain) api.ReportDomain {
	return api.ReportDomain{Domain: d.Domain, Sent: d.Sent, Bounced: d.Bounced, Complained: d.Complained,
		Unsubscribed: d.Unsubbed, Opened: d.Opened, OpenedPeople: d.OpenedPeople, Clicked: d.Clicked,
		ClickedPeople: d.ClickedPeople}
}
