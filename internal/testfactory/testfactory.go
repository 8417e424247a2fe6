// Package testfactory builds the rows tests start from: accounts, lists and their
// members, subscribers, segments, senders and their pools, templates, campaigns,
// sends, tracked links, tracking hits, suppressions and sequence enrollments. It
// writes them through the product's own queries where one writes the row as the
// test wants it (an account, a list, a membership, a segment, a sender pool) and
// through the harness's queries (db/queries/harness/factory.sql) where none does (a
// subscriber in any status, a campaign in any state, a send already settled, a
// suppression without its event), so no test writes SQL of its own to set up. Only
// tests import it.
package testfactory

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sendonce/sendonce/internal/harnessstore"
	"github.com/sendonce/sendonce/internal/store"
)

// DB is what the factory writes on: a pool, a connection or a transaction.
type DB interface {
	store.DBTX
	harnessstore.DBTX
}

// Factory writes fixtures on one database; every method fails the test on an error.
type Factory struct {
	q *store.Queries
	h *harnessstore.Queries
}

// New returns a factory writing on db.
func New(db DB) *Factory { return &Factory{q: store.New(db), h: harnessstore.New(db)} }

// Account creates an account named name.
func (f *Factory) Account(t testing.TB, name string) store.Account {
	t.Helper()
	a, err := f.q.AccountCreate(t.Context(), name)
	if err != nil {
		t.Fatalf("testfactory: account %q: %v", name, err)
	}
	return a
}

// List creates a list of the account named name, with the table's defaults
// (single opt-in, not public, no description).
func (f *Factory) List(t testing.TB, accountID int64, name string) int64 {
	t.Helper()
	l, err := f.q.ListCreate(t.Context(), store.ListCreateParams{AccountID: accountID, Name: name, Optin: "single"})
	if err != nil {
		t.Fatalf("testfactory: list %q: %v", name, err)
	}
	return l.ID
}

// Members adds the account's subscribers to the list.
func (f *Factory) Members(t testing.TB, accountID, listID int64, subscriberIDs ...int64) {
	t.Helper()
	n, err := f.q.ListMembersAdd(t.Context(), store.ListMembersAddParams{ListID: listID, AccountID: accountID,
		SubscriberIds: subscriberIDs})
	if err != nil {
		t.Fatalf("testfactory: members of list %d: %v", listID, err)
	}
	if n != int64(len(subscriberIDs)) {
		t.Fatalf("testfactory: %d of %d subscribers joined list %d (another account's, or one twice?)", n,
			len(subscriberIDs), listID)
	}
}

// MembersByPrefix adds every subscriber of the account whose address starts with
// prefix (a LIKE pattern's start, so no % or _; "": all of them) to the list in one
// statement, as Subscribers names them; one already on it stays as it is. It
// returns how many joined.
func (f *Factory) MembersByPrefix(t testing.TB, accountID, listID int64, prefix string) int64 {
	t.Helper()
	return f.Memberships(t, accountID, listID, Membership{Prefix: prefix})
}

// Membership is a run of memberships of a list to create: every subscriber of the
// account whose address starts with Prefix, as MembersByPrefix, or only the one
// SubscriberID (0: any), in Status (empty: the table's subscribed) since StatusAt
// (nil: now).
type Membership struct {
	Prefix       string
	SubscriberID int64
	Status       string
	StatusAt     *time.Time
}

// Memberships adds the run to the list in one statement; one already on it stays
// as it is. It returns how many joined.
func (f *Factory) Memberships(t testing.TB, accountID, listID int64, m Membership) int64 {
	t.Helper()
	n, err := f.h.FactoryMembersByPrefix(t.Context(), harnessstore.FactoryMembersByPrefixParams{ListID: listID,
		AccountID: accountID, Prefix: m.Prefix, SubscriberID: m.SubscriberID, Status: or(m.Status, "subscribed"),
		StatusAt: m.StatusAt})
	if err != nil {
		t.Fatalf("testfactory: members %s… of list %d: %v", m.Prefix, listID, err)
	}
	return n
}

// Subscriber is a subscriber to create; the zero values are the table's defaults
// (status pending, no name, no attributes, not signed up through a form, created
// now). Its email_lower is lower(Email).
type Subscriber struct {
	Email      string
	Name       string
	Status     string
	Attributes json.RawMessage
	Signup     bool
	CreatedAt  *time.Time
}

// Subscriber creates the subscriber in the account and returns its id.
func (f *Factory) Subscriber(t testing.TB, accountID int64, s Subscriber) int64 {
	t.Helper()
	p := harnessstore.FactorySubscriberParams{AccountID: accountID, Email: s.Email, Name: s.Name,
		Status: or(s.Status, "pending"), Attributes: s.Attributes, Signup: s.Signup, CreatedAt: s.CreatedAt}
	if p.Attributes == nil {
		p.Attributes = json.RawMessage(`{}`)
	}
	id, err := f.h.FactorySubscriber(t.Context(), p)
	if err != nil {
		t.Fatalf("testfactory: subscriber %q: %v", s.Email, err)
	}
	return id
}

// Subscribers creates n subscribers of the account in one statement,
// <prefix>1@example.com to <prefix>n@example.com, in the status (empty: pending).
func (f *Factory) Subscribers(t testing.TB, accountID int64, prefix string, n int, status string) {
	t.Helper()
	f.BulkSubscribers(t, accountID, Bulk{Prefix: prefix, N: n, Statuses: []string{or(status, "pending")}})
}

// Bulk is a run of subscribers to create in one statement, numbered From to
// From+N-1 (From 0: 1); the i-th is <Prefix><i><Suffix>@<Domain>, its email_lower
// lower of that. Statuses and Attributes are cycled through, the i-th taking entry
// (i-1) % len (none: pending and {}).
type Bulk struct {
	Prefix, Suffix string
	// Domain is example.com when empty.
	Domain string
	From   int
	N      int
	// Name is every one's name, followed by i if NumberName.
	Name       string
	NumberName bool
	Statuses   []string
	Attributes []json.RawMessage
	// NumberKey, if not empty, adds {NumberKey: i} to each one's attributes.
	NumberKey string
	// Signup marks them signed up through a public form; CreatedAt (nil: now) is
	// when they were created.
	Signup    bool
	CreatedAt *time.Time
}

// BulkSubscribers creates the run of subscribers in the account and returns the
// first one's id.
func (f *Factory) BulkSubscribers(t testing.TB, accountID int64, b Bulk) int64 {
	t.Helper()
	first := max(b.From, 1)
	p := harnessstore.FactorySubscribersParams{AccountID: accountID, Name: b.Name, NumberName: b.NumberName,
		Statuses: b.Statuses, Attributes: b.Attributes, NumberKey: b.NumberKey, Signup: b.Signup,
		CreatedAt: b.CreatedAt, First: int32(first), Last: int32(first + b.N - 1), Prefix: b.Prefix, Suffix: b.Suffix,
		Domain: or(b.Domain, "example.com")}
	if len(p.Statuses) == 0 {
		p.Statuses = []string{"pending"}
	}
	if len(p.Attributes) == 0 {
		p.Attributes = []json.RawMessage{json.RawMessage(`{}`)}
	}
	got, err := f.h.FactorySubscribers(t.Context(), p)
	if err != nil || got.N != int64(b.N) {
		t.Fatalf("testfactory: %d subscribers %s…: %d made, %v", b.N, b.Prefix, got.N, err)
	}
	return got.FirstID
}

// Campaign is a campaign to create; an empty Name, Subject or FromEmail is "c",
// "s" or "a@example.com", an empty Status the table's draft.
type Campaign struct {
	Name, Subject, FromEmail string
	HTML, Text               string
	Status                   string
	ListIDs                  []int64
	// Archive shows the campaign in the account's public archive once sent.
	Archive bool
	// SenderID is the sender it leaves through (nil: the account's default).
	SenderID                            *int64
	ScheduledFor, ApprovedAt, StartedAt *time.Time
	// Language is the campaign's content language (empty: none), Policy what the
	// executor does with a send whose outcome is unknown (empty: the table's skip).
	Language, Policy string
	// SegmentID is the segment it goes to (nil: its lists); DeliverAtLocal the
	// recipients' local time of day it goes out at (empty: at once).
	SegmentID      *int64
	DeliverAtLocal string
	// ABMode (split or test; empty: no A/B test) and ABVariants are its A/B test's;
	// Variant adds the variants.
	ABMode     string
	ABVariants int16
}

// Campaign creates the campaign in the account and returns its id.
func (f *Factory) Campaign(t testing.TB, accountID int64, c Campaign) int64 {
	t.Helper()
	p := harnessstore.FactoryCampaignParams{AccountID: accountID, Name: or(c.Name, "c"), Subject: or(c.Subject, "s"),
		FromEmail: or(c.FromEmail, "a@example.com"), HtmlTemplate: c.HTML, TextTemplate: c.Text,
		Status: or(c.Status, "draft"), ListIds: c.ListIDs, Archive: c.Archive, SenderID: c.SenderID,
		ScheduledFor: c.ScheduledFor, ApprovedAt: c.ApprovedAt, StartedAt: c.StartedAt, Language: c.Language,
		AmbiguousPolicy: or(c.Policy, "skip"), SegmentID: c.SegmentID}
	if c.DeliverAtLocal != "" {
		p.DeliverAtLocal = &c.DeliverAtLocal
	}
	if c.ABMode != "" {
		p.AbMode, p.AbVariants = &c.ABMode, &c.ABVariants
	}
	if p.ListIds == nil {
		p.ListIds = []int64{}
	}
	id, err := f.h.FactoryCampaign(t.Context(), p)
	if err != nil {
		t.Fatalf("testfactory: campaign %q: %v", p.Name, err)
	}
	return id
}

// Variant is a variant of an A/B campaign to create, numbered Idx (1 to 5); an
// empty Subject or HTML is the campaign's own.
type Variant struct {
	Idx           int16
	Subject, HTML string
}

// Variant creates the variant of the account's campaign.
func (f *Factory) Variant(t testing.TB, accountID, campaignID int64, v Variant) {
	t.Helper()
	p := harnessstore.FactoryVariantParams{AccountID: accountID, CampaignID: campaignID, Idx: v.Idx}
	if v.Subject != "" {
		p.Subject = &v.Subject
	}
	if v.HTML != "" {
		p.HtmlTemplate = &v.HTML
	}
	if err := f.h.FactoryVariant(t.Context(), p); err != nil {
		t.Fatalf("testfactory: variant %d of campaign %d: %v", v.Idx, campaignID, err)
	}
}

// Send is a campaign send to create; an empty Status is the table's queued, an
// empty JobID the executor's campaign:<campaign>:<subscriber>. Its email_lower is
// lower(Email).
type Send struct {
	Email             string
	Status            string
	JobID             string
	Attempts          int32
	SentAt            *time.Time
	LeaseUntil        *time.Time
	ProviderMessageID string
	// NextAttemptAt is when it is due (nil: the table's -infinity, at once).
	NextAttemptAt *time.Time
}

// Send creates the campaign's send to the subscriber and returns its id.
func (f *Factory) Send(t testing.TB, accountID, campaignID, subscriberID int64, s Send) int64 {
	t.Helper()
	p := harnessstore.FactorySendParams{CampaignID: campaignID, AccountID: accountID, SubscriberID: subscriberID,
		Email: s.Email, Status: or(s.Status, "queued"), Attempts: s.Attempts, SentAt: s.SentAt,
		LeaseUntil: s.LeaseUntil, NextAttemptAt: s.NextAttemptAt}
	if s.JobID != "" {
		p.JobID = &s.JobID
	}
	if s.ProviderMessageID != "" {
		p.ProviderMessageID = &s.ProviderMessageID
	}
	id, err := f.h.FactorySend(t.Context(), p)
	if err != nil {
		t.Fatalf("testfactory: send of campaign %d to %q: %v", campaignID, s.Email, err)
	}
	return id
}

// SendsToAll creates the campaign's send to every subscriber of the account, in
// the status (empty: queued), with the executor's job ids, in one statement.
func (f *Factory) SendsToAll(t testing.TB, accountID, campaignID int64, status string) {
	t.Helper()
	f.Sends(t, accountID, campaignID, Sends{Statuses: []string{or(status, "queued")}})
}

// Sends is a run of a campaign's sends to create in one statement, one to each
// subscriber of the account whose address starts with Prefix (a LIKE pattern's
// start; "": all of them) and whose status is SubscriberStatus ("": any), with an
// id above After, the first Limit of them by id (0: all), with the executor's job
// ids. Statuses and Variants are cycled through, the k-th send (from 1, by
// subscriber id) taking entry (k-1) % len (none: queued, and no variant).
type Sends struct {
	Prefix           string
	SubscriberStatus string
	After            int64
	Limit            int
	Statuses         []string
	Variants         []int16
	// SentAt is when the sent ones went, LeaseUntil how long the sending ones are
	// leased for; the others have neither.
	SentAt, LeaseUntil *time.Time
}

// Sends creates the run of the campaign's sends and returns how many it made and
// the last subscriber's id (0: none).
func (f *Factory) Sends(t testing.TB, accountID, campaignID int64, s Sends) (n, lastSubscriber int64) {
	t.Helper()
	p := harnessstore.FactorySendsParams{CampaignID: campaignID, AccountID: accountID, Prefix: s.Prefix,
		SubscriberStatus: s.SubscriberStatus, After: s.After, Statuses: s.Statuses, Variants: s.Variants,
		SentAt: s.SentAt, LeaseUntil: s.LeaseUntil}
	if len(p.Statuses) == 0 {
		p.Statuses = []string{"queued"}
	}
	if p.Variants == nil {
		p.Variants = []int16{}
	}
	if s.Limit > 0 {
		limit := int64(s.Limit)
		p.N = &limit
	}
	got, err := f.h.FactorySends(t.Context(), p)
	if err != nil {
		t.Fatalf("testfactory: sends of campaign %d: %v", campaignID, err)
	}
	return got.N, got.LastSubscriber
}

// TrackedLinks records the campaign's trackable links, numbered from 1 in order.
func (f *Factory) TrackedLinks(t testing.TB, accountID, campaignID int64, urls ...string) {
	t.Helper()
	for i, u := range urls {
		if err := f.h.FactoryTrackedLink(t.Context(), harnessstore.FactoryTrackedLinkParams{AccountID: accountID,
			CampaignID: campaignID, Idx: int32(i + 1), Url: u}); err != nil {
			t.Fatalf("testfactory: link %d of campaign %d: %v", i+1, campaignID, err)
		}
	}
}

// Suppression suppresses the address in the account for the reason (unsubscribe,
// hard_bounce, complaint or manual), recording source as where it came from. It
// writes the row alone, without the suppression.created event the product's
// suppression add also writes.
func (f *Factory) Suppression(t testing.TB, accountID int64, email, reason, source string) {
	t.Helper()
	if err := f.h.FactorySuppression(t.Context(), harnessstore.FactorySuppressionParams{AccountID: accountID,
		Email: email, Reason: reason, Source: source}); err != nil {
		t.Fatalf("testfactory: suppression of %q: %v", email, err)
	}
}

// Suppressions suppresses n addresses of the account in one statement,
// <prefix>1@example.com to <prefix>n@example.com (lowered), for the reason, with no
// source and without the events the product writes.
func (f *Factory) Suppressions(t testing.TB, accountID int64, prefix string, n int, reason string) {
	t.Helper()
	got, err := f.h.FactorySuppressions(t.Context(), harnessstore.FactorySuppressionsParams{AccountID: accountID,
		Prefix: prefix, Reason: reason, N: int32(n)})
	if err != nil || got != int64(n) {
		t.Fatalf("testfactory: %d suppressions %s…: %d made, %v", n, prefix, got, err)
	}
}

// Events writes n events of the account of the type in one statement, occurred
// now, the i-th's data data (nil: {}) plus {numberKey: i} unless numberKey is empty.
func (f *Factory) Events(t testing.TB, accountID int64, typ string, n int, data json.RawMessage, numberKey string) {
	t.Helper()
	if data == nil {
		data = json.RawMessage(`{}`)
	}
	got, err := f.h.FactoryEvents(t.Context(), harnessstore.FactoryEventsParams{AccountID: accountID, Type: typ,
		Data: data, NumberKey: numberKey, N: int32(n)})
	if err != nil || got != int64(n) {
		t.Fatalf("testfactory: %d %s events: %d made, %v", n, typ, got, err)
	}
}

// TrackingHit is a hit on a campaign send to record: an open (Link 0) or a click
// on the campaign's link numbered Link (0: the honeypot), by a GET at At.
type TrackingHit struct {
	Kind         string
	Link         int32
	At           time.Time
	SuspectedBot bool
}

// TrackingHit records the hit on the campaign's send, with no user agent and no
// bot reasons.
func (f *Factory) TrackingHit(t testing.TB, accountID, campaignID, sendID int64, h TrackingHit) {
	t.Helper()
	if err := f.h.FactoryTrackingHit(t.Context(), harnessstore.FactoryTrackingHitParams{AccountID: accountID,
		CampaignID: campaignID, SendID: sendID, Kind: h.Kind, LinkIdx: h.Link, OccurredAt: h.At,
		SuspectedBot: h.SuspectedBot}); err != nil {
		t.Fatalf("testfactory: %s hit on send %d: %v", h.Kind, sendID, err)
	}
}

// Segment is a segment to create through the product's own query: a JSON path
// Match on the attributes, or an engagement condition, or both. Its statuses and
// lists are empty (any).
type Segment struct {
	Name  string
	Match string
	// EngagedKind (open or click) asks for the people who engaged so with
	// EngagedCampaign (0: any campaign); EngagedNegated for those who did not.
	EngagedKind     string
	EngagedNegated  bool
	EngagedCampaign int64
	// CountScanners counts hits suspected as bots as engagement too; false is the
	// table's default, people only.
	CountScanners bool
}

// Segment creates the segment in the account and returns its id.
func (f *Factory) Segment(t testing.TB, accountID int64, s Segment) int64 {
	t.Helper()
	p := store.SegmentCreateParams{AccountID: accountID, Name: s.Name, Statuses: []string{}, ListIds: []int64{},
		EngagedNegated: s.EngagedNegated, EngagedPeopleOnly: !s.CountScanners}
	if s.Match != "" {
		p.Match = &s.Match
	}
	if s.EngagedKind != "" {
		p.EngagedKind = &s.EngagedKind
	}
	if s.EngagedCampaign != 0 {
		p.EngagedCampaignID = &s.EngagedCampaign
	}
	seg, err := f.q.SegmentCreate(t.Context(), p)
	if err != nil {
		t.Fatalf("testfactory: segment %q: %v", s.Name, err)
	}
	return seg.ID
}

// Sender creates a sender of the account of the type (smtp, http, postmark, …),
// the account's default if isDefault, with no settings and no secret: enough to
// route campaigns and count by, not to deliver through. It returns its id.
func (f *Factory) Sender(t testing.TB, accountID int64, name, typ string, isDefault bool) int64 {
	t.Helper()
	id, err := f.h.FactorySender(t.Context(), harnessstore.FactorySenderParams{AccountID: accountID, Name: name,
		Type: typ, IsDefault: isDefault})
	if err != nil {
		t.Fatalf("testfactory: sender %q: %v", name, err)
	}
	return id
}

// Template is a template to create; an empty HTML or Text is the table's empty body.
type Template struct {
	Name, Subject, HTML, Text string
}

// Template creates the template in the account and returns its id.
func (f *Factory) Template(t testing.TB, accountID int64, tpl Template) int64 {
	t.Helper()
	id, err := f.h.FactoryTemplate(t.Context(), harnessstore.FactoryTemplateParams{AccountID: accountID, Name: tpl.Name,
		Subject: tpl.Subject, Html: tpl.HTML, Text: tpl.Text})
	if err != nil {
		t.Fatalf("testfactory: template %q: %v", tpl.Name, err)
	}
	return id
}

// SenderPool creates a pool of the account's senders through the product's own
// queries, the senders in the order given (the first is the primary), and returns
// its id.
func (f *Factory) SenderPool(t testing.TB, accountID int64, name string, senderIDs ...int64) int64 {
	t.Helper()
	p, err := f.q.PoolCreate(t.Context(), store.PoolCreateParams{AccountID: accountID, Name: name})
	if err != nil {
		t.Fatalf("testfactory: pool %q: %v", name, err)
	}
	n, err := f.q.PoolMembersSet(t.Context(), store.PoolMembersSetParams{PoolID: p.ID, AccountID: accountID,
		SenderIds: senderIDs})
	if err != nil || n != int64(len(senderIDs)) {
		t.Fatalf("testfactory: %d of %d senders joined pool %q (another account's?): %v", n, len(senderIDs), name, err)
	}
	return p.ID
}

// EnrollEveryone enrolls every subscriber of the account in the sequence by hand
// (trigger manual), active at its first step and due at due, in one statement, as
// a backlog the advancer has yet to work through. It returns how many it enrolled.
func (f *Factory) EnrollEveryone(t testing.TB, accountID, sequenceID int64, due time.Time) int64 {
	t.Helper()
	n, err := f.h.FactoryEnrollEveryone(t.Context(), harnessstore.FactoryEnrollEveryoneParams{SequenceID: sequenceID,
		DueAt: due, AccountID: accountID})
	if err != nil {
		t.Fatalf("testfactory: enrollments in sequence %d: %v", sequenceID, err)
	}
	return n
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
