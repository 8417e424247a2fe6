package testfactory_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestRowsAsDescribed: each row reads back as the factory's comments promise: the
// table's defaults where a field is empty, lower(email), the executor's job id.
func TestRowsAsDescribed(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := testfactory.New(pool)
	q := store.New(pool)
	acct := f.Account(t, "a")
	other := f.Account(t, "b")
	require.NotEqual(t, acct.PublicID, other.PublicID)

	list := f.List(t, acct.ID, "l")
	ada := f.Subscriber(t, acct.ID, testfactory.Subscriber{Email: "Ada@Example.com"})
	bob := f.Subscriber(t, acct.ID, testfactory.Subscriber{Email: "bob@example.com", Name: "Bob", Status: "confirmed",
		Attributes: []byte(`{"plan":"pro"}`)})
	f.Members(t, acct.ID, list, ada, bob)
	s, err := q.SubscriberGet(t.Context(), store.SubscriberGetParams{AccountID: acct.ID, ID: ada})
	require.NoError(t, err)
	require.Equal(t, "pending", s.Status)
	require.False(t, s.Signup)
	require.WithinDuration(t, time.Now(), s.CreatedAt, time.Minute)
	signedUp := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	cy := f.Subscriber(t, acct.ID, testfactory.Subscriber{Email: "cy@example.com", Signup: true, CreatedAt: &signedUp})
	signup, err := q.SubscriberGet(t.Context(), store.SubscriberGetParams{AccountID: acct.ID, ID: cy})
	require.NoError(t, err)
	require.True(t, signup.Signup)
	require.True(t, signup.CreatedAt.Equal(signedUp))
	require.Equal(t, "ada@example.com", s.EmailLower)
	require.JSONEq(t, `{}`, string(s.Attributes))
	s, err = q.SubscriberGet(t.Context(), store.SubscriberGetParams{AccountID: acct.ID, ID: bob})
	require.NoError(t, err)
	require.Equal(t, "confirmed", s.Status)
	require.Equal(t, "Bob", s.Name)
	require.JSONEq(t, `{"plan":"pro"}`, string(s.Attributes))

	f.Subscribers(t, other.ID, "P", 3, "")
	var pending int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM subscribers WHERE account_id = $1
		AND status = 'pending' AND email_lower IN ('p1@example.com', 'p2@example.com', 'p3@example.com')`,
		other.ID).Scan(&pending))
	require.Equal(t, 3, pending)

	created := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	firstBulk := f.BulkSubscribers(t, acct.ID, testfactory.Bulk{Prefix: "B", Suffix: "-x", Domain: "Example.org", From: 7,
		N: 3, Name: "Sub ", NumberName: true, Statuses: []string{"confirmed", "unsubscribed"},
		Attributes: []json.RawMessage{[]byte(`{"plan":"pro"}`), []byte(`{}`)}, NumberKey: "n", Signup: true,
		CreatedAt: &created})
	var bulk []string
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT array_agg(concat_ws(' ', id - $2, email, email_lower, name, status,
		attributes::text, signup, created_at = $3) ORDER BY id) FROM subscribers WHERE account_id = $1 AND email LIKE 'B%'`,
		acct.ID, firstBulk, created).Scan(&bulk))
	require.Equal(t, []string{
		`0 B7-x@Example.org b7-x@example.org Sub 7 confirmed {"n": 7, "plan": "pro"} t t`,
		`1 B8-x@Example.org b8-x@example.org Sub 8 unsubscribed {"n": 8} t t`,
		`2 B9-x@Example.org b9-x@example.org Sub 9 confirmed {"n": 9, "plan": "pro"} t t`}, bulk)

	c := f.Campaign(t, acct.ID, testfactory.Campaign{})
	started := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	sent := f.Campaign(t, acct.ID, testfactory.Campaign{Name: "news", Status: "sent", ListIDs: []int64{list},
		Archive: true, StartedAt: &started})
	var name, subject, from, status string
	var lists []int64
	var archive bool
	var startedAt *time.Time
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT name, subject, from_email, status, list_ids, archive, started_at
		FROM campaigns WHERE id = $1`, c).Scan(&name, &subject, &from, &status, &lists, &archive, &startedAt))
	require.Equal(t, []any{"c", "s", "a@example.com", "draft", []int64{}, false, (*time.Time)(nil)},
		[]any{name, subject, from, status, lists, archive, startedAt})
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT name, status, list_ids, archive, started_at
		FROM campaigns WHERE id = $1`, sent).Scan(&name, &status, &lists, &archive, &startedAt))
	require.Equal(t, []any{"news", "sent", []int64{list}, true}, []any{name, status, lists, archive})
	require.True(t, startedAt.Equal(started))

	seg := f.Segment(t, acct.ID, testfactory.Segment{Name: "all", Match: `$.plan == "pro"`})
	ab := f.Campaign(t, acct.ID, testfactory.Campaign{Language: "fr", Policy: "retry", SegmentID: &seg,
		DeliverAtLocal: "09:00", ABMode: "split", ABVariants: 2})
	f.Variant(t, acct.ID, ab, testfactory.Variant{Idx: 2, Subject: "B"})
	var language, policy, local, mode string
	var segID int64
	var variants int16
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT language, ambiguous_policy, segment_id, deliver_at_local::text,
		ab_mode, ab_variants FROM campaigns WHERE id = $1`, ab).Scan(&language, &policy, &segID, &local, &mode, &variants))
	require.Equal(t, []any{"fr", "retry", seg, "09:00", "split", int16(2)},
		[]any{language, policy, segID, local, mode, variants})
	var policyDefault string
	var noLanguage, noLocal, noMode, noSegment bool
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT ambiguous_policy, language = '', deliver_at_local IS NULL,
		ab_mode IS NULL AND ab_variants IS NULL, segment_id IS NULL FROM campaigns WHERE id = $1`, c).
		Scan(&policyDefault, &noLanguage, &noLocal, &noMode, &noSegment))
	require.Equal(t, []any{"skip", true, true, true, true}, []any{policyDefault, noLanguage, noLocal, noMode, noSegment})
	var vSubject, vHTML *string
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT subject, html_template FROM campaign_variants
		WHERE campaign_id = $1 AND idx = 2 AND account_id = $2`, ab, acct.ID).Scan(&vSubject, &vHTML))
	require.Equal(t, []any{"B", (*string)(nil)}, []any{*vSubject, vHTML})

	f.Suppressions(t, acct.ID, "X", 3, "manual")
	var suppressed []string
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT array_agg(concat_ws(' ', email_lower, reason, source = '')
		ORDER BY email_lower) FROM suppressions WHERE account_id = $1 AND email_lower LIKE 'x%'`, acct.ID).Scan(&suppressed))
	require.Equal(t, []string{"x1@example.com manual t", "x2@example.com manual t", "x3@example.com manual t"}, suppressed)
	f.Events(t, acct.ID, "send.sent", 2, []byte(`{"campaign_id": 7}`), "send_id")
	f.Events(t, other.ID, "send.sent", 1, nil, "")
	var datas []string
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT array_agg(data::text ORDER BY id) FROM events
		WHERE account_id = ANY($1) AND type = 'send.sent'`, []int64{acct.ID, other.ID}).Scan(&datas))
	require.Equal(t, []string{`{"send_id": 1, "campaign_id": 7}`, `{"send_id": 2, "campaign_id": 7}`, `{}`}, datas)

	queued := f.Send(t, acct.ID, c, ada, testfactory.Send{Email: "Ada@Example.com"})
	done := f.Send(t, acct.ID, sent, bob, testfactory.Send{Email: "bob@example.com", JobID: "mine", Status: "sent",
		Attempts: 1, SentAt: &started, ProviderMessageID: "p-1"})
	retryAt := started.Add(time.Minute)
	later := f.Send(t, acct.ID, c, bob, testfactory.Send{Email: "bob@example.com", NextAttemptAt: &retryAt})
	var dueAt time.Time
	var atOnce bool
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT (SELECT next_attempt_at FROM sends WHERE id = $1),
		(SELECT next_attempt_at = '-infinity' FROM sends WHERE id = $2)`, later, queued).Scan(&dueAt, &atOnce))
	require.True(t, dueAt.Equal(retryAt))
	require.True(t, atOnce)
	var job, lower string
	var pmid *string
	var attempts int32
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT job_id, email_lower, status, attempts, provider_message_id
		FROM sends WHERE id = $1`, queued).Scan(&job, &lower, &status, &attempts, &pmid))
	require.Equal(t, []any{"campaign:" + itoa(c) + ":" + itoa(ada), "ada@example.com", "queued", int32(0), (*string)(nil)},
		[]any{job, lower, status, attempts, pmid})
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT job_id, status, attempts, provider_message_id
		FROM sends WHERE id = $1`, done).Scan(&job, &status, &attempts, &pmid))
	require.Equal(t, []any{"mine", "sent", int32(1), "p-1"}, []any{job, status, attempts, *pmid})

	f.TrackedLinks(t, acct.ID, sent, "https://a.example/1", "https://a.example/2")
	var urls []string
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT array_agg(url ORDER BY idx) FROM tracked_links
		WHERE campaign_id = $1 AND idx IN (1, 2)`, sent).Scan(&urls))
	require.Equal(t, []string{"https://a.example/1", "https://a.example/2"}, urls)

	f.Suppression(t, acct.ID, "Gone@Example.com", "hard_bounce", "t")
	var reason, source string
	var events int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT reason, source FROM suppressions
		WHERE account_id = $1 AND email_lower = 'gone@example.com'`, acct.ID).Scan(&reason, &source))
	require.Equal(t, []string{"hard_bounce", "t"}, []string{reason, source})
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM events WHERE account_id = $1
		AND type = 'suppression.created'`, acct.ID).Scan(&events))
	require.Zero(t, events, "the row alone, no event")

	at := started.Add(time.Hour)
	f.TrackingHit(t, acct.ID, sent, done, testfactory.TrackingHit{Kind: "click", Link: 2, At: at, SuspectedBot: true})
	var kind, method, agent string
	var link int32
	var bot bool
	var occurred time.Time
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT kind, link_idx, occurred_at, method, user_agent, suspected_bot
		FROM tracking_hits WHERE send_id = $1`, done).Scan(&kind, &link, &occurred, &method, &agent, &bot))
	require.Equal(t, []any{"click", int32(2), "GET", "", true}, []any{kind, link, method, agent, bot})
	require.True(t, occurred.Equal(at))

	pro := f.Segment(t, acct.ID, testfactory.Segment{Name: "pro", Match: `$.plan == "pro"`})
	quiet := f.Segment(t, acct.ID, testfactory.Segment{Name: "quiet", EngagedKind: "open", EngagedNegated: true,
		EngagedCampaign: sent})
	var match, engaged *string
	var negated, peopleOnly bool
	var engagedCampaign *int64
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT match::text, engaged_kind, engaged_negated, engaged_campaign_id,
		engaged_people_only FROM segments WHERE id = $1`, pro).Scan(&match, &engaged, &negated, &engagedCampaign, &peopleOnly))
	require.Equal(t, []any{`($."plan" == "pro")`, (*string)(nil), false, (*int64)(nil), true},
		[]any{*match, engaged, negated, engagedCampaign, peopleOnly})
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT match::text, engaged_kind, engaged_negated, engaged_campaign_id,
		engaged_people_only FROM segments WHERE id = $1`, quiet).Scan(&match, &engaged, &negated, &engagedCampaign, &peopleOnly))
	require.Equal(t, []any{(*string)(nil), "open", true, sent, true}, []any{match, *engaged, negated, *engagedCampaign, peopleOnly})

	snd := f.Sender(t, acct.ID, "esp", "postmark", true)
	var typ string
	var isDefault bool
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT name, type, is_default FROM senders WHERE id = $1 AND account_id = $2`,
		snd, acct.ID).Scan(&name, &typ, &isDefault))
	require.Equal(t, []any{"esp", "postmark", true}, []any{name, typ, isDefault})

	tpl := f.Template(t, acct.ID, testfactory.Template{Name: "receipt", Subject: "Receipt", Text: "Hi"})
	var html, text string
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT name, subject, html, text FROM templates WHERE id = $1 AND account_id = $2`,
		tpl, acct.ID).Scan(&name, &subject, &html, &text))
	require.Equal(t, []string{"receipt", "Receipt", "", "Hi"}, []string{name, subject, html, text})

	relay := f.Sender(t, acct.ID, "relay", "smtp", false)
	pl := f.SenderPool(t, acct.ID, "relays", relay, snd)
	var members []int64
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT array_agg(sender_id ORDER BY position) FROM sender_pool_members
		WHERE pool_id = $1 AND account_id = $2`, pl, acct.ID).Scan(&members))
	require.Equal(t, []int64{relay, snd}, members)

	f.Subscribers(t, other.ID, "Q", 2, "confirmed")
	everyone := f.List(t, other.ID, "everyone")
	qs := f.List(t, other.ID, "q")
	require.Equal(t, int64(5), f.MembersByPrefix(t, other.ID, everyone, ""))
	require.Equal(t, int64(2), f.MembersByPrefix(t, other.ID, qs, "Q"))
	require.Zero(t, f.MembersByPrefix(t, other.ID, qs, "q"), "already on it")
	require.Zero(t, f.MembersByPrefix(t, acct.ID, f.List(t, acct.ID, "none"), "q"), "another account's subscribers stay off")
	pendingList := f.List(t, other.ID, "pending")
	require.Equal(t, int64(1), f.Memberships(t, other.ID, pendingList, testfactory.Membership{Prefix: "q1@",
		Status: "pending", StatusAt: &created}))
	require.Zero(t, f.Memberships(t, other.ID, pendingList, testfactory.Membership{SubscriberID: ada}),
		"another account's subscriber stays off")
	var memberStatus string
	var memberSince time.Time
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT status, status_at FROM list_members WHERE list_id = $1
		AND account_id = $2`, pendingList, other.ID).Scan(&memberStatus, &memberSince))
	require.Equal(t, "pending", memberStatus)
	require.True(t, memberSince.Equal(created))
	var everyoneStatus []string
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT array_agg(DISTINCT status) FROM list_members WHERE list_id = $1`,
		everyone).Scan(&everyoneStatus))
	require.Equal(t, []string{"subscribed"}, everyoneStatus)

	oc := f.Campaign(t, other.ID, testfactory.Campaign{Status: "sending"})
	lease := started.Add(time.Minute)
	n, last := f.Sends(t, other.ID, oc, testfactory.Sends{SubscriberStatus: "pending", Limit: 2,
		Statuses: []string{"sent", "sending"}, Variants: []int16{1, 2}, SentAt: &started, LeaseUntil: &lease})
	require.Equal(t, int64(2), n)
	n, lastOfAll := f.Sends(t, other.ID, oc, testfactory.Sends{After: last})
	require.Equal(t, int64(3), n)
	var runs []string // concat_ws leaves the nulls out: a sent row has no lease, a sending one no sent_at
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT array_agg(concat_ws(' ', s.email_lower, d.status, d.variant,
		d.sent_at = $2, d.lease_until = $3, d.job_id = 'campaign:' || d.campaign_id || ':' || s.id,
		s.id = $4, s.id = $5) ORDER BY s.id) FROM sends d JOIN subscribers s ON s.id = d.subscriber_id
		WHERE d.campaign_id = $1`, oc, started, lease, last, lastOfAll).Scan(&runs))
	require.Equal(t, []string{"p1@example.com sent 1 t t f f", "p2@example.com sending 2 t t t f",
		"p3@example.com queued t f f", "q1@example.com queued t f f", "q2@example.com queued t f t"}, runs)

	seq, err := sequence.NewService(pool).Create(t.Context(), other.ID, sequence.Definition{Name: "welcome",
		Trigger: sequence.Trigger{Type: sequence.TriggerManual}, Steps: []sequence.Step{{Type: sequence.StepSend,
			TemplateID: f.Template(t, other.ID, testfactory.Template{Name: "w", Subject: "Hi", Text: "Hi"}),
			FromEmail:  "hello@example.com"}}})
	require.NoError(t, err)
	due := started.Add(2 * time.Hour)
	require.Equal(t, int64(5), f.EnrollEveryone(t, other.ID, seq.ID, due))
	var enrolled, early int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*), count(*) FILTER (WHERE due_at < $2)
		FROM sequence_enrollments WHERE sequence_id = $1 AND account_id = $3 AND trigger = 'manual' AND step = 0
		AND state = 'active'`, seq.ID, due, other.ID).Scan(&enrolled, &early))
	require.Equal(t, []int{5, 0}, []int{enrolled, early})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
