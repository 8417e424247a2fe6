package report_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/report"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

func str(s string) *string { return &s }

// fixture is one account's sending campaign with two tracked links and n
// recipients spread over a few domains, every send claimed once ('sending',
// attempts 1) as the executor leaves them before its acknowledgement.
type fixture struct {
	t          *testing.T
	ctx        context.Context
	pool       *pgxpool.Pool
	q          *store.Queries
	accountID  int64
	campaignID int64
	sendIDs    []int64
}

var domains = []string{"gmail.com", "Outlook.COM", "example.org", "gmail.com", "yahoo.fr", "gmail.com"}

func newFixture(t *testing.T, pool *pgxpool.Pool, name string, n int) *fixture {
	t.Helper()
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, name)
	require.NoError(t, err)
	c, err := campaign.NewService(pool).Create(ctx, acc.ID, campaign.Fields{Name: str("c"), Subject: str("s"),
		FromEmail: str("a@example.com"), TextTemplate: str("hi")})
	require.NoError(t, err)
	f := &fixture{t: t, ctx: ctx, pool: pool, q: store.New(pool), accountID: acc.ID, campaignID: c.ID}
	f.exec(`UPDATE campaigns SET status = 'sending' WHERE id = $1`, c.ID)
	fx := testfactory.New(pool)
	fx.TrackedLinks(t, acc.ID, c.ID, "https://a.example/1", "https://a.example/2")
	for i := range n {
		email := fmt.Sprintf("%s-%d@%s", name, i, domains[i%len(domains)])
		sub := fx.Subscriber(t, acc.ID, testfactory.Subscriber{Email: email, Status: "confirmed"})
		lease := time.Now().Add(time.Minute)
		send := fx.Send(t, acc.ID, c.ID, sub, testfactory.Send{Email: email, Status: "sending", Attempts: 1,
			LeaseUntil: &lease})
		f.sendIDs = append(f.sendIDs, send)
	}
	return f
}

func (f *fixture) exec(sql string, args ...any) {
	f.t.Helper()
	_, err := f.pool.Exec(f.ctx, sql, args...)
	require.NoError(f.t, err)
}

// ack acknowledges sends as the completer does, with one status each.
func (f *fixture) ack(ids []int64, status string) {
	f.t.Helper()
	p := store.SendAckManyParams{}
	for _, id := range ids {
		p.Ids = append(p.Ids, id)
		p.Attempts = append(p.Attempts, 1)
		p.Statuses = append(p.Statuses, status)
		p.ProviderIds = append(p.ProviderIds, fmt.Sprintf("pm-%d", id))
		p.Errors = append(p.Errors, "")
		p.RetryInUs = append(p.RetryInUs, 0)
		p.Doubts = append(p.Doubts, false)
	}
	_, err := f.q.SendAckMany(f.ctx, p)
	require.NoError(f.t, err)
}

func (f *fixture) feedback(sendID int64, kind string) {
	f.t.Helper()
	_, err := f.q.SendRecordFeedback(f.ctx, store.SendRecordFeedbackParams{AccountID: f.accountID,
		ProviderMessageID: str(fmt.Sprintf("pm-%d", sendID)), Feedback: &kind})
	require.NoError(f.t, err)
}

func (f *fixture) unsubscribe(sendID int64, source string) {
	f.t.Helper()
	var sub int64
	require.NoError(f.t, f.pool.QueryRow(f.ctx, `SELECT subscriber_id FROM sends WHERE id = $1`, sendID).Scan(&sub))
	require.NoError(f.t, f.q.SendRecordUnsubscribe(f.ctx, store.SendRecordUnsubscribeParams{Source: source,
		AccountID: f.accountID, CampaignID: f.campaignID, SubscriberID: sub}))
}

// hit is one tracking hit: an open (link -1) or a click on a link (0: the
// honeypot), by a person or a suspected scanner.
type hit struct {
	send    int64
	link    int
	scanner bool
}

// flush records hits as one flusher batch.
func (f *fixture) flush(hits ...hit) {
	f.t.Helper()
	p := store.TrackingHitsInsertParams{DeliveryWindowSeconds: 0}
	for _, h := range hits {
		kind, link := "click", int32(h.link)
		if h.link < 0 {
			kind, link = "open", 0
		}
		reasons := ""
		if h.scanner {
			reasons = "user-agent"
		}
		p.AccountIds = append(p.AccountIds, f.accountID)
		p.CampaignIds = append(p.CampaignIds, f.campaignID)
		p.SendIds = append(p.SendIds, h.send)
		p.Kinds = append(p.Kinds, kind)
		p.LinkIdxs = append(p.LinkIdxs, link)
		p.OccurredAts = append(p.OccurredAts, time.Now())
		p.Methods = append(p.Methods, "GET")
		p.UserAgents = append(p.UserAgents, "ua")
		p.Reasons = append(p.Reasons, reasons)
		p.MessageIds = append(p.MessageIds, 0)
	}
	_, err := f.q.TrackingHitsInsert(f.ctx, p)
	require.NoError(f.t, err)
}

// recount is the report counted from the rows: sends (status, feedback and its
// source, by domain) and tracking hits.
type recount struct {
	Sent, Hard, Soft, Complaints, OneClick, Prefs, Provider int64
	Opens, Clicks                                           report.Engagement
	Domains                                                 map[string][4]int64 // sent, bounced, complained, opened people
	Links                                                   map[int]report.Engagement
}

func (f *fixture) recount() recount {
	f.t.Helper()
	r := recount{Domains: map[string][4]int64{}, Links: map[int]report.Engagement{}}
	require.NoError(f.t, f.pool.QueryRow(f.ctx, `SELECT
		count(*) FILTER (WHERE status = 'sent'),
		count(*) FILTER (WHERE feedback = 'hard_bounce'), count(*) FILTER (WHERE feedback = 'soft_bounce'),
		count(*) FILTER (WHERE feedback = 'complaint'),
		count(*) FILTER (WHERE feedback = 'unsubscribe' AND feedback_source = 'one_click'),
		count(*) FILTER (WHERE feedback = 'unsubscribe' AND feedback_source = 'preferences'),
		count(*) FILTER (WHERE feedback = 'unsubscribe' AND feedback_source = 'provider')
		FROM sends WHERE campaign_id = $1`, f.campaignID).Scan(&r.Sent, &r.Hard, &r.Soft, &r.Complaints,
		&r.OneClick, &r.Prefs, &r.Provider))
	engagement := func(kind string, link string) report.Engagement {
		var e report.Engagement
		require.NoError(f.t, f.pool.QueryRow(f.ctx, `SELECT count(*), count(DISTINCT send_id),
			count(*) FILTER (WHERE NOT suspected_bot), count(DISTINCT send_id) FILTER (WHERE NOT suspected_bot)
			FROM tracking_hits WHERE campaign_id = $1 AND kind = $2 AND (kind = 'open' OR link_idx > 0) AND `+link,
			f.campaignID, kind).Scan(&e.Total, &e.Unique, &e.People, &e.PeopleUnique))
		return e
	}
	r.Opens, r.Clicks = engagement("open", "true"), engagement("click", "true")
	for _, l := range []int{1, 2} {
		r.Links[l] = engagement("click", fmt.Sprintf("link_idx = %d", l))
	}
	rows, err := f.pool.Query(f.ctx, `SELECT substring(s.email_lower FROM '[^@]*$'),
		count(*) FILTER (WHERE s.status = 'sent'), count(*) FILTER (WHERE s.feedback IN ('hard_bounce', 'soft_bounce')),
		count(*) FILTER (WHERE s.feedback = 'complaint'),
		count(*) FILTER (WHERE EXISTS (SELECT 1 FROM tracking_hits h WHERE h.send_id = s.id AND h.kind = 'open'
		                                                            AND NOT h.suspected_bot))
		FROM sends s WHERE s.campaign_id = $1 GROUP BY 1`, f.campaignID)
	require.NoError(f.t, err)
	defer rows.Close()
	for rows.Next() {
		var d string
		var v [4]int64
		require.NoError(f.t, rows.Scan(&d, &v[0], &v[1], &v[2], &v[3]))
		r.Domains[d] = v
	}
	require.NoError(f.t, rows.Err())
	return r
}

// fromReport is the same shape read from a report.
func fromReport(c report.Campaign) recount {
	r := recount{Sent: c.Sent, Hard: c.Feedback.HardBounces, Soft: c.Feedback.SoftBounces, Complaints: c.Feedback.Complaints,
		OneClick: c.Feedback.UnsubOneClick, Prefs: c.Feedback.UnsubPreferences, Provider: c.Feedback.UnsubProvider,
		Opens: c.Opens, Clicks: c.Clicks, Domains: map[string][4]int64{}, Links: map[int]report.Engagement{}}
	for _, d := range c.Domains {
		r.Domains[d.Domain] = [4]int64{d.Sent, d.Bounced, d.Complained, d.OpenedPeople}
	}
	for _, l := range c.Links {
		r.Links[l.Index] = l.Clicks
	}
	return r
}

// TestReportCountersEqualRecount: after a mixed run (acks of every outcome, a
// retry, bounces replacing bounces, complaints, opt-outs from each source, opens
// and clicks from people and scanners over several flushes, honeypot hits) the
// kept counters equal a full recount from the rows; after send retention deleted
// every row they are unchanged.
func TestReportCountersEqualRecount(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := newFixture(t, pool, "a", 60)
	other := newFixture(t, pool, "b", 6) // another account's campaign, acked alike
	other.ack(other.sendIDs, "sent")
	other.flush(hit{send: other.sendIDs[0], link: -1})
	ids := f.sendIDs

	f.ack(ids[:40], "sent")
	f.ack(ids[40:45], "failed")
	f.ack(ids[45:50], "unknown")
	f.ack(ids[50:55], "queued") // retried: not sent yet
	f.ack(ids[45:47], "sent")   // a late success on rows the rescuer had settled unknown

	f.feedback(ids[0], "soft_bounce")
	f.feedback(ids[0], "hard_bounce") // replaces the soft bounce
	f.feedback(ids[1], "soft_bounce")
	f.feedback(ids[1], "soft_bounce") // a second delay of the same message
	f.feedback(ids[2], "complaint")
	f.feedback(ids[2], "soft_bounce") // milder: ignored
	f.feedback(ids[3], "hard_bounce")
	f.feedback(ids[4], "unsubscribe") // a provider's list-unsubscribe
	f.feedback(ids[5], "complaint")
	f.unsubscribe(ids[5], "one_click") // after a complaint: the complaint stays
	f.unsubscribe(ids[6], "one_click")
	f.unsubscribe(ids[6], "preferences") // a second opt-out of one send counts once
	f.unsubscribe(ids[7], "preferences")
	f.unsubscribe(ids[8], "one_click")

	f.flush(hit{send: ids[10], link: -1, scanner: true}, hit{send: ids[10], link: -1}, hit{send: ids[10], link: -1},
		hit{send: ids[11], link: -1, scanner: true}, hit{send: ids[12], link: 1}, hit{send: ids[12], link: 1, scanner: true},
		hit{send: ids[13], link: 0}, hit{send: ids[14], link: 2, scanner: true})
	f.flush(hit{send: ids[10], link: -1}, hit{send: ids[11], link: -1}, hit{send: ids[12], link: 2},
		hit{send: ids[14], link: 2}, hit{send: ids[15], link: 1}, hit{send: ids[15], link: 1}, hit{send: ids[16], link: 0},
		hit{send: ids[17], link: -1, scanner: true})

	s := report.NewService(pool, campaign.NewService(pool))
	before := f.recount()
	got, err := s.Campaign(f.ctx, f.accountID, f.campaignID, report.MaxDomains)
	require.NoError(t, err)
	require.Equal(t, before, fromReport(got))
	// The fixture's expectations, so a recount that counts nothing cannot pass.
	require.Equal(t, int64(42), before.Sent)
	require.Equal(t, [4]int64{21, 2, 1, 1}, before.Domains["gmail.com"]) // ids 0, 3, 5 of every 6
	require.Equal(t, report.Engagement{Total: 7, Unique: 3, People: 4, PeopleUnique: 2}, before.Opens)
	require.Equal(t, report.Engagement{Total: 7, Unique: 3, People: 5, PeopleUnique: 3}, before.Clicks)
	require.Len(t, got.Domains, 4)
	require.Equal(t, report.Domain{}, got.Other)

	top, err := s.Campaign(f.ctx, f.accountID, f.campaignID, 1)
	require.NoError(t, err)
	require.Equal(t, "gmail.com", top.Domains[0].Domain)
	require.Equal(t, before.Sent-21, top.Other.Sent)

	// Retention deletes every settled row (the retried ones, still queued, are
	// cancelled first, as a cancelled campaign's sweep closes them).
	f.exec(`UPDATE campaigns SET status = 'sent', finished_at = now() - interval '1 year' WHERE id = $1`, f.campaignID)
	f.exec(`UPDATE sends SET status = 'cancelled' WHERE campaign_id = $1 AND status IN ('queued', 'sending')`, f.campaignID)
	for {
		n, err := f.q.SendDeleteRetired(f.ctx, store.SendDeleteRetiredParams{CampaignID: f.campaignID, N: 7})
		require.NoError(t, err)
		if n == 0 {
			break
		}
	}
	var left int64
	require.NoError(t, pool.QueryRow(f.ctx, `SELECT count(*) FROM sends WHERE campaign_id = $1`, f.campaignID).Scan(&left))
	require.Zero(t, left)
	after, err := report.NewService(pool, campaign.NewService(pool)).Campaign(f.ctx, f.accountID, f.campaignID, report.MaxDomains)
	require.NoError(t, err)
	require.Equal(t, before, fromReport(after))
	require.Equal(t, int64(42), after.Stats.Counts["sent"])

	// The other account's counters are its own.
	o, err := s.Campaign(f.ctx, other.accountID, other.campaignID, 10)
	require.NoError(t, err)
	require.Equal(t, int64(6), o.Sent)
	require.Equal(t, int64(1), o.Opens.PeopleUnique)
}

// TestReportOtherAccount: another account's campaign is not found, and the day
// counters of one account never show another's.
func TestReportOtherAccount(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	a := newFixture(t, pool, "a", 3)
	b := newFixture(t, pool, "b", 4)
	a.ack(a.sendIDs, "sent")
	b.ack(b.sendIDs, "sent")
	s := report.NewService(pool, campaign.NewService(pool))
	_, err := s.Campaign(a.ctx, a.accountID, b.campaignID, 10)
	require.True(t, apperr.Is(err, apperr.NotFound), "%v", err)

	today := time.Now().UTC()
	days, err := s.Analytics(a.ctx, a.accountID, today.AddDate(0, 0, -1), today)
	require.NoError(t, err)
	require.Len(t, days, 1)
	require.Equal(t, "campaign", days[0].Kind)
	require.Equal(t, int64(3), days[0].Sent)

	_, err = s.Analytics(a.ctx, a.accountID, today, today.AddDate(0, 0, -1))
	require.True(t, apperr.Is(err, apperr.Invalid), "%v", err)
	_, err = s.Campaign(a.ctx, a.accountID, a.campaignID, 0)
	require.True(t, apperr.Is(err, apperr.Invalid), "%v", err)
}

// TestAnalyticsByKind: the day counters keep each kind of sending apart — a
// campaign's sends, a message stream's and a sequence step's — as the
// acknowledgement of each writes them.
func TestAnalyticsByKind(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	s := report.NewService(pool, campaign.NewService(pool))
	today := time.Now().UTC()
	for i, kind := range []string{"campaign", "messages", "sequence"} {
		f := newFixture(t, pool, "k"+kind, 2+i)
		f.exec(`UPDATE campaigns SET kind = $2 WHERE id = $1`, f.campaignID, kind)
		f.ack(f.sendIDs, "sent")
		days, err := s.Analytics(f.ctx, f.accountID, today, today)
		require.NoError(t, err)
		require.Len(t, days, 1, kind)
		require.Equal(t, kind, days[0].Kind)
		require.Equal(t, int64(2+i), days[0].Sent, kind)
	}
}
