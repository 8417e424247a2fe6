package campaign

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Stats are the counts of a campaign's sends by status.
type Stats struct {
	CampaignID int64
	Status     string
	// Counts has every send status, zeros included.
	Counts                map[string]int64
	Total                 int64
	StartedAt, FinishedAt *time.Time
	// SkippedSuppressed and SkippedUnconfirmed are the subscribers of the target
	// lists the recipient build left out: suppressed ones, and of the rest those not
	// confirmed. Nil until the campaign is built.
	SkippedSuppressed, SkippedUnconfirmed *int64
}

// Send is one recipient of a campaign.
type Send struct {
	ID, SubscriberID  int64
	Email, Status     string
	Attempts          int
	SentAt            *time.Time
	LastError         *string
	ProviderMessageID *string
}

// Stats counts the campaign's sends by status, from the kept counters. The counts may be up to StatsTTL
// old (see statsCache), but never older than the campaign's status: a campaign
// answered as sent or cancelled comes with counts taken after it got there. The
// campaign's status, timestamps and build skips are always current.
func (s *Service) Stats(ctx context.Context, accountID, id int64) (Stats, error) {
	q := store.New(s.pool)
	c, err := q.CampaignGet(ctx, store.CampaignGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Stats{}, postgres.Error(err, "campaign")
	}
	counts, err := s.stats.get(ctx, statsKey{accountID, id}, c.Status, func(ctx context.Context) (statsCounts, error) {
		// The kept counters (CampaignStatusCounts), not a recount of the rows: the
		// same numbers (invariant.Options.KeptCounters holds them equal to a recount of
		// the live and archived rows), read from a few counter rows plus the queued
		// and sending rows' partial indexes, so a finished campaign of millions of
		// sends costs a few index reads. Status and counts come from one statement.
		n, err := q.CampaignStatusCounts(ctx, store.CampaignStatusCountsParams{AccountID: accountID, CampaignID: id})
		if err != nil {
			return statsCounts{}, err
		}
		return statsCounts{status: n.CampaignStatus, counts: map[string]int64{"queued": n.Queued, "sending": n.Sending,
			"sent": n.Sent, "failed": n.Failed, "suppressed": n.Suppressed, "cancelled": n.Cancelled, "unknown": n.Unknown}}, nil
	})
	if err != nil {
		return Stats{}, err
	}
	var total int64
	for _, v := range counts {
		total += v
	}
	return Stats{CampaignID: c.ID, Status: c.Status, Counts: counts, Total: total, StartedAt: c.StartedAt,
		FinishedAt: c.FinishedAt, SkippedSuppressed: c.SkippedSuppressed, SkippedUnconfirmed: c.SkippedUnconfirmed}, nil
}

// KeptStats is Stats read from the kept counters (CampaignStatusCounts): a few
// index reads whatever the campaign's size, never cached, and the same after
// retention deleted the rows. The report reads it; /stats reads the same
// counters through the stats cache (Stats).
func (s *Service) KeptStats(ctx context.Context, accountID, id int64) (Stats, error) {
	q := store.New(s.pool)
	c, err := q.CampaignGet(ctx, store.CampaignGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Stats{}, postgres.Error(err, "campaign")
	}
	n, err := q.CampaignStatusCounts(ctx, store.CampaignStatusCountsParams{AccountID: accountID, CampaignID: id})
	if err != nil {
		return Stats{}, err
	}
	counts := map[string]int64{"queued": n.Queued, "sending": n.Sending, "sent": n.Sent, "failed": n.Failed,
		"suppressed": n.Suppressed, "cancelled": n.Cancelled, "unknown": n.Unknown}
	var total int64
	for _, v := range counts {
		total += v
	}
	return Stats{CampaignID: c.ID, Status: c.Status, Counts: counts, Total: total, StartedAt: c.StartedAt,
		FinishedAt: c.FinishedAt, SkippedSuppressed: c.SkippedSuppressed, SkippedUnconfirmed: c.SkippedUnconfirmed}, nil
}

// Sends returns up to limit sends of the campaign after afterID in id order,
// optionally of one status.
func (s *Service) Sends(ctx context.Context, accountID, id, afterID int64, status *string, limit int) ([]Send, error) {
	return s.SendsTo(ctx, accountID, id, afterID, status, nil, limit)
}

// SendsTo is Sends, only those to email when it is not nil: an exact address,
// matched case-insensitively (anything that is not an address is invalid, naming
// /email). A status that is not a send status is invalid, naming /status.
func (s *Service) SendsTo(ctx context.Context, accountID, id, afterID int64, status, email *string, limit int) ([]Send, error) {
	if status != nil && !sendStatuses[*status] {
		return nil, apperr.Invalidf("/status", "status must be one of queued, sending, sent, failed, suppressed, cancelled, unknown")
	}
	var lower string
	if email != nil {
		addr, err := address.Parse(*email)
		if err != nil {
			return nil, apperr.Invalidf("/email", "email must be one address: %s", err.Error())
		}
		lower = addr.Lower
	}
	q := store.New(s.pool)
	if _, err := q.CampaignStatusGet(ctx, store.CampaignStatusGetParams{AccountID: accountID, ID: id}); err != nil {
		return nil, postgres.Error(err, "campaign")
	}
	var rows []store.SendListRow
	var err error
	if email != nil {
		var found []store.SendListByEmailRow
		found, err = q.SendListByEmail(ctx, store.SendListByEmailParams{AccountID: accountID, CampaignID: id,
			EmailLower: lower, AfterID: afterID, Status: status, Lim: int32(limit)})
		for _, r := range found {
			rows = append(rows, store.SendListRow(r))
		}
	} else {
		rows, err = q.SendList(ctx, store.SendListParams{AccountID: accountID, CampaignID: id, AfterID: afterID, Status: status, Lim: int32(limit)})
	}
	if err != nil {
		return nil, err
	}
	out := make([]Send, len(rows))
	for i, r := range rows {
		out[i] = Send{ID: r.ID, SubscriberID: r.SubscriberID, Email: r.Email, Status: r.Status, Attempts: int(r.Attempts),
			SentAt: r.SentAt, LastError: r.LastError, ProviderMessageID: r.ProviderMessageID}
	}
	return out, nil
}

var sendStatuses = map[string]bool{"queued": true, "sending": true, "sent": true, "failed": true,
	"suppressed": true, "cancelled": true, "unknown": true}

// TimelinePoint is one bucket of a campaign's timeline: the sends that settled in
// it, by status; the opens and clicks of people (hits not suspected of being a
// scanner) that came in it; the recipients whose final feedback came in it.
type TimelinePoint struct {
	At                                           time.Time
	Sent, Failed, Suppressed, Cancelled, Unknown int64
	OpensPeople, ClicksPeople                    int64
	HardBounces, SoftBounces, Complaints         int64
	Unsubscribes                                 int64
}

// TimelineBuckets is the most buckets a timeline has.
const TimelineBuckets = 200

// Timeline returns the campaign's settled sends by when they settled, and its
// engagement and feedback by when they came, in at most
// TimelineBuckets buckets, and the buckets' width in seconds (0: no point yet).
// Another account's campaign is not found.
func (s *Service) Timeline(ctx context.Context, accountID, id int64) ([]TimelinePoint, int64, error) {
	q := store.New(s.pool)
	if _, err := q.CampaignStatusGet(ctx, store.CampaignStatusGetParams{AccountID: accountID, ID: id}); err != nil {
		return nil, 0, postgres.Error(err, "campaign")
	}
	rows, err := q.CampaignTimeline(ctx, store.CampaignTimelineParams{AccountID: accountID, CampaignID: id, MaxBuckets: TimelineBuckets})
	if err != nil {
		return nil, 0, err
	}
	out := make([]TimelinePoint, len(rows))
	var step int64
	for i, r := range rows {
		step = r.StepSeconds
		out[i] = TimelinePoint{At: r.Bucket, Sent: r.Sent, Failed: r.Failed, Suppressed: r.Suppressed, Cancelled: r.Cancelled,
			Unknown: r.Unknown, OpensPeople: r.OpensPeople, ClicksPeople: r.ClicksPeople, HardBounces: r.HardBounces,
			SoftBounces: r.SoftBounces, Complaints: r.Complaints, Unsubscribes: r.Unsubscribes}
	}
	return out, step, nil
}
