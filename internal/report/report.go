// Package report answers what happened to a campaign (its report) and to an
// account over a range of days (its analytics), from the kept counters the send,
// feedback, opt-out and tracking statements maintain (migration 00460). Reading
// them costs a few index reads whatever the campaign's size, and the counts stay
// the same after send retention deleted the rows they came from.
package report

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/store"
)

// DefaultDomains is how many recipient domains a report lists by default, the rest
// summed as "other"; MaxDomains the most it lists.
const (
	DefaultDomains = 10
	MaxDomains     = 100
)

// MaxDays is the longest range of account analytics.
const MaxDays = 366

// Service reads reports and analytics.
type Service struct {
	pool      *pgxpool.Pool
	campaigns *campaign.Service
}

// NewService returns a Service on pool; campaigns gives the send status counts
// (its kept counters: KeptStats).
func NewService(pool *pgxpool.Pool, campaigns *campaign.Service) *Service {
	return &Service{pool: pool, campaigns: campaigns}
}

// Feedback is what recipients answered, by send: bounces, complaints and opt-outs.
type Feedback struct {
	HardBounces, SoftBounces, Complaints int64
	// Unsubscribes by where they came from.
	UnsubOneClick, UnsubPreferences, UnsubProvider int64
}

// Unsubscribes is every opt-out, whatever its source.
func (f Feedback) Unsubscribes() int64 { return f.UnsubOneClick + f.UnsubPreferences + f.UnsubProvider }

// Engagement counts one kind of hit (opens or clicks): Total hits and Unique
// recipients, and the same for hits not suspected of being a scanner (People).
type Engagement struct {
	Total, Unique, People, PeopleUnique int64
}

// Domain is one recipient domain's line of a report.
type Domain struct {
	Domain                              string
	Sent, Bounced, Complained, Unsubbed int64
	Opened, OpenedPeople                int64
	Clicked, ClickedPeople              int64
}

// Link is one tracked link's line of a report.
type Link struct {
	Index  int
	URL    string
	Clicks Engagement
}

// Campaign is a campaign's report.
type Campaign struct {
	Stats campaign.Stats
	// Sent is the kept count of messages the provider accepted (it equals
	// Stats.Counts["sent"] once the rows are acknowledged).
	Sent     int64
	Feedback Feedback
	Opens    Engagement
	Clicks   Engagement
	// Domains are the top domains by sent; Other sums the rest (Domain "").
	Domains []Domain
	Other   Domain
	Links   []Link
}

// Campaign reads the report of the account's campaign id, listing its top domains
// (1 to MaxDomains). Another account's campaign is not found.
func (s *Service) Campaign(ctx context.Context, accountID, id int64, domains int) (Campaign, error) {
	if domains < 1 || domains > MaxDomains {
		return Campaign{}, apperr.Invalidf("/domains", "domains must be between 1 and %d", MaxDomains)
	}
	st, err := s.campaigns.KeptStats(ctx, accountID, id)
	if err != nil {
		return Campaign{}, err
	}
	q := store.New(s.pool)
	t, err := q.ReportCampaignTotals(ctx, store.ReportCampaignTotalsParams{AccountID: accountID, CampaignID: id})
	if err != nil {
		return Campaign{}, err
	}
	out := Campaign{Stats: st, Sent: t.Sent,
		Feedback: Feedback{HardBounces: t.HardBounces, SoftBounces: t.SoftBounces, Complaints: t.Complaints,
			UnsubOneClick: t.UnsubOneClick, UnsubPreferences: t.UnsubPreferences, UnsubProvider: t.UnsubProvider},
		Opens:  Engagement{Total: t.Opens, Unique: t.Opened, People: t.OpensPeople, PeopleUnique: t.OpenedPeople},
		Clicks: Engagement{Total: t.Clicks, Unique: t.Clicked, People: t.ClicksPeople, PeopleUnique: t.ClickedPeople},
	}
	rows, err := q.ReportCampaignDomains(ctx, store.ReportCampaignDomainsParams{AccountID: accountID, CampaignID: id, Lim: int32(domains)})
	if err != nil {
		return Campaign{}, err
	}
	other := Domain{Sent: t.Sent, Bounced: t.HardBounces + t.SoftBounces, Complained: t.Complaints,
		Unsubbed: out.Feedback.Unsubscribes(), Opened: t.Opened, OpenedPeople: t.OpenedPeople, Clicked: t.Clicked,
		ClickedPeople: t.ClickedPeople}
	for _, r := range rows {
		d := Domain{Domain: r.Domain, Sent: r.Sent, Bounced: r.HardBounces + r.SoftBounces, Complained: r.Complaints,
			Unsubbed: r.Unsubscribes, Opened: r.Opened, OpenedPeople: r.OpenedPeople, Clicked: r.Clicked,
			ClickedPeople: r.ClickedPeople}
		out.Domains = append(out.Domains, d)
		other.Sent -= d.Sent
		other.Bounced -= d.Bounced
		other.Complained -= d.Complained
		other.Unsubbed -= d.Unsubbed
		other.Opened -= d.Opened
		other.OpenedPeople -= d.OpenedPeople
		other.Clicked -= d.Clicked
		other.ClickedPeople -= d.ClickedPeople
	}
	out.Other = other
	links, err := q.ReportCampaignLinks(ctx, store.ReportCampaignLinksParams{AccountID: accountID, CampaignID: id})
	if err != nil {
		return Campaign{}, err
	}
	for _, l := range links {
		out.Links = append(out.Links, Link{Index: int(l.Idx), URL: l.Url,
			Clicks: Engagement{Total: l.Clicks, Unique: l.Clicked, People: l.ClicksPeople, PeopleUnique: l.ClickedPeople}})
	}
	return out, nil
}

// Day is one day's counts of one kind of sending ("campaign", "messages",
// "sequence") in account analytics.
type Day struct {
	Day                                  time.Time
	Kind                                 string
	Sent                                 int64
	HardBounces, SoftBounces, Complaints int64
	Unsubscribes                         int64
	OpenedPeople, ClickedPeople          int64
}

// Analytics reads the account's day counts from from to to (UTC days, both
// included, at most MaxDays), days and kinds with nothing left out.
func (s *Service) Analytics(ctx context.Context, accountID int64, from, to time.Time) ([]Day, error) {
	if to.Before(from) {
		return nil, apperr.Invalidf("/to", "to must not be before from")
	}
	if to.Sub(from) >= MaxDays*24*time.Hour {
		return nil, apperr.Invalidf("/to", "the range must be at most %d days", MaxDays)
	}
	rows, err := store.New(s.pool).ReportAccountDays(ctx, store.ReportAccountDaysParams{AccountID: accountID,
		FromDay: pgDate(from), ToDay: pgDate(to)})
	if err != nil {
		return nil, err
	}
	out := make([]Day, len(rows))
	for i, r := range rows {
		out[i] = Day{Day: r.Day.Time, Kind: r.Kind, Sent: r.Sent, HardBounces: r.HardBounces, SoftBounces: r.SoftBounces,
			Complaints: r.Complaints, Unsubscribes: r.Unsubscribes, OpenedPeople: r.OpenedPeople, ClickedPeople: r.ClickedPeople}
	}
	return out, nil
}

func pgDate(t time.Time) pgtype.Date {
	return pgtype.Date{Time: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), Valid: true}
}
