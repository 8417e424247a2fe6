// Package erasure erases a person from an account (GDPR Art. 17): their address,
// name, attributes and content are removed or irreversibly pseudonymised wherever
// the product keeps them (docs/reports.md lists every table and column), and a
// keyed hash of the address stays in the suppression list, so the opt-out outlives
// the erasure (suppression.Erased recognises the address when it comes back).
//
// An erasure runs as a sequence of short statements, each bounded by a window of
// ids or a list of the person's rows, never one transaction that grows with the
// person's history or the account's size: every account's event readers wait for
// the oldest running transaction. Each step is idempotent, and the subscriber row,
// from which a repeated request resumes, goes last.
package erasure

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/suppression"
)

// Window is how many ids of a table one scanning statement covers.
const Window = 20_000

// Chunk is how many of the person's rows one statement changes.
const Chunk = 500

// Forgetter drops what a process holds in memory for an address (the dev inbox).
type Forgetter interface {
	Forget(emailLower string) int
}

// Service erases people.
type Service struct {
	pool   *pgxpool.Pool
	erased *suppression.Erased
	// Memory is what the process keeps outside the database; nil for none.
	Memory Forgetter
	// Window overrides the scan window (tests make it small to cross windows).
	Window int64
	// Chunk overrides how many of the person's rows one statement changes (tests
	// make it small to cross chunks).
	Chunk int
}

// NewService returns a Service on pool; erased hashes the address kept in the
// suppression list and must not be nil.
func NewService(pool *pgxpool.Pool, erased *suppression.Erased) *Service {
	return &Service{pool: pool, erased: erased, Window: Window, Chunk: Chunk}
}

// Result is one erasure: what was done, never to whom (no address).
type Result struct {
	ID           int64
	SubscriberID *int64
	RequestedBy  string
	Status       string
	Counts       map[string]int64
	CreatedAt    time.Time
	CompletedAt  *time.Time
}

// ErrInFlight is returned while a send to the person is in a provider's hands: its
// row is settled within a lease, and the erasure can then finish. Nothing has been
// erased yet except the person's queued sends (suppressed) and the subscriber's
// status (unsubscribed), so a retry resumes cleanly.
var ErrInFlight = &apperr.Error{Code: apperr.Conflict,
	Message: "a message to this person is being sent right now; retry the erasure in a minute"}

// person is whom an erasure acts on.
type person struct {
	accountID    int64
	subscriberID *int64
	lower        string
	pattern      string
}

// EraseSubscriber erases a subscriber of the account and everything kept about its
// address. A subscriber already erased answers its erasure again (idempotent);
// another account's id answers not found.
func (s *Service) EraseSubscriber(ctx context.Context, accountID, subscriberID int64, requestedBy string) (Result, error) {
	q := store.New(s.pool)
	sub, err := q.SubscriberGet(ctx, store.SubscriberGetParams{AccountID: accountID, ID: subscriberID})
	if err = postgres.Error(err, "subscriber"); apperr.Is(err, apperr.NotFound) {
		done, gerr := q.ErasureGet(ctx, store.ErasureGetParams{AccountID: accountID, SubscriberID: &subscriberID})
		if gerr == nil && done.Status == "completed" {
			return fromStore(done), nil
		}
		return Result{}, err
	} else if err != nil {
		return Result{}, err
	}
	id := sub.ID
	return s.erase(ctx, person{accountID: accountID, subscriberID: &id, lower: sub.EmailLower}, requestedBy)
}

// EraseAddress erases an address of the account: its subscriber if it has one, or
// else what is kept of it without one (messages sent to it).
func (s *Service) EraseAddress(ctx context.Context, accountID int64, email, requestedBy string) (Result, error) {
	addr, err := address.Parse(email)
	if err != nil {
		return Result{}, apperr.Invalidf("/email", "%s", err.Error())
	}
	id, err := store.New(s.pool).ErasureSubscriberByEmail(ctx, store.ErasureSubscriberByEmailParams{
		AccountID: accountID, EmailLower: addr.Lower})
	switch {
	case err == nil:
		return s.erase(ctx, person{accountID: accountID, subscriberID: &id, lower: addr.Lower}, requestedBy)
	case postgres.NoRows(err):
		return s.erase(ctx, person{accountID: accountID, lower: addr.Lower}, requestedBy)
	default:
		return Result{}, err
	}
}

// Pattern is the case-insensitive regular expression (PostgreSQL's) matching the
// address in the forms it may be stored in: as typed (any case) and URL-encoded.
func Pattern(lower string) string {
	forms := []string{lower, url.QueryEscape(lower), url.PathEscape(lower), strings.ReplaceAll(lower, "@", "%40")}
	seen := map[string]bool{}
	var alts []string
	for _, f := range forms {
		f = strings.ToLower(f)
		if !seen[f] {
			seen[f] = true
			alts = append(alts, regexp.QuoteMeta(f))
		}
	}
	return strings.Join(alts, "|")
}

type counts map[string]int64

func (c counts) add(step string, n int64) {
	if n > 0 {
		c[step] += n
	}
}

func (s *Service) erase(ctx context.Context, p person, requestedBy string) (Result, error) {
	p.pattern = Pattern(p.lower)
	q := store.New(s.pool)
	var rec store.Erasure
	// The opt-out first: from here on nothing new is sent to the person.
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		var err error
		rec, err = q.ErasureStart(ctx, store.ErasureStartParams{AccountID: p.accountID, SubscriberID: p.subscriberID, RequestedBy: requestedBy})
		if err != nil {
			return err
		}
		if err := q.ErasureSuppressHash(ctx, store.ErasureSuppressHashParams{AccountID: p.accountID, Hash: s.erased.Key(p.lower)}); err != nil {
			return err
		}
		if p.subscriberID != nil {
			return q.ErasureSubscriberStop(ctx, store.ErasureSubscriberStopParams{AccountID: p.accountID, ID: *p.subscriberID})
		}
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("start erasure: %w", err)
	}
	c := counts{}
	max, err := q.ErasureMaxIDs(ctx)
	if err != nil {
		return Result{}, err
	}
	sends, err := s.findSends(ctx, p, max.Sends, c)
	if err != nil {
		return Result{}, err
	}
	if sends.inFlight > 0 {
		return Result{}, ErrInFlight
	}
	msgs, err := s.findMessages(ctx, p, max.Messages)
	if err != nil {
		return Result{}, err
	}
	// Events, hits and the sequence data are found through the send rows and the
	// messages, so they go before those lose the address.
	if err := s.scrubEvents(ctx, p, sends, msgs, c); err != nil {
		return Result{}, err
	}
	if err := s.scrubHits(ctx, p, max.Hits, sends, msgs, c); err != nil {
		return Result{}, err
	}
	if err := s.scrubRest(ctx, p, sends, c); err != nil {
		return Result{}, err
	}
	if err := s.scrubMessages(ctx, p, msgs, c); err != nil {
		return Result{}, err
	}
	for _, ids := range chunks(s.Chunk, sends.ids) {
		n, err := q.ErasureSendsScrub(ctx, store.ErasureSendsScrubParams{Pattern: p.pattern, AccountID: p.accountID, Ids: ids})
		if err != nil {
			return Result{}, fmt.Errorf("erase sends: %w", err)
		}
		c.add("sends", n)
	}
	if s.Memory != nil {
		c.add("dev_inbox", int64(s.Memory.Forget(p.lower)))
	}
	// Last, with the record of what was done: the subscriber and its memberships,
	// and the plain suppression the hash now stands for.
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		n, err := q.ErasureSuppressionDelete(ctx, store.ErasureSuppressionDeleteParams{AccountID: p.accountID, EmailLower: p.lower})
		if err != nil {
			return err
		}
		c.add("suppressions", n)
		if p.subscriberID != nil {
			n, err := q.ErasureSubscriberDelete(ctx, store.ErasureSubscriberDeleteParams{AccountID: p.accountID, ID: *p.subscriberID})
			if err != nil {
				return err
			}
			c.add("subscribers", n)
		}
		b, _ := json.Marshal(c)
		if rec, err = q.ErasureComplete(ctx, store.ErasureCompleteParams{Counts: b, AccountID: p.accountID, ID: rec.ID}); err != nil {
			return err
		}
		data := map[string]any{"erasure_id": rec.ID, "requested_by": requestedBy}
		if p.subscriberID != nil {
			data["subscriber_id"] = *p.subscriberID
		}
		return event.Emit(ctx, tx, p.accountID, event.SubscriberErased, data)
	})
	if err != nil {
		return Result{}, fmt.Errorf("finish erasure: %w", err)
	}
	return fromStore(rec), nil
}

// personSends is what the person's send rows are: their ids (also as text, for the
// events' JSON), and the job ids of sequence steps (whose data is kept apart).
type personSends struct {
	ids      []int64
	idTexts  []string
	seqJobs  []string
	inFlight int
}

func (s *Service) findSends(ctx context.Context, p person, maxID int64, c counts) (personSends, error) {
	q := store.New(s.pool)
	var out personSends
	var queued []int64
	for after := int64(0); after < maxID; after += s.Window {
		rows, err := q.ErasureSendsFind(ctx, store.ErasureSendsFindParams{AfterID: after, UptoID: after + s.Window,
			AccountID: p.accountID, EmailLower: p.lower, SubscriberID: p.subscriberID})
		if err != nil {
			return out, fmt.Errorf("find sends: %w", err)
		}
		for _, r := range rows {
			out.ids = append(out.ids, r.ID)
			out.idTexts = append(out.idTexts, strconv.FormatInt(r.ID, 10))
			if strings.HasPrefix(r.JobID, "sequence:") {
				out.seqJobs = append(out.seqJobs, r.JobID)
			}
			switch r.Status {
			case "queued":
				queued = append(queued, r.ID)
			case "sending":
				out.inFlight++
			}
		}
	}
	for _, ids := range chunks(s.Chunk, queued) {
		n, err := q.ErasureSendsSuppressQueued(ctx, store.ErasureSendsSuppressQueuedParams{AccountID: p.accountID, Ids: ids})
		if err != nil {
			return out, fmt.Errorf("suppress queued sends: %w", err)
		}
		c.add("sends_suppressed", n)
	}
	if len(queued) > 0 { // a claim may have taken one between the look and the update
		for _, ids := range chunks(s.Chunk, queued) {
			n, err := q.ErasureSendsInFlight(ctx, store.ErasureSendsInFlightParams{AccountID: p.accountID, Ids: ids})
			if err != nil {
				return out, err
			}
			out.inFlight += int(n)
		}
	}
	return out, nil
}

// personMessages are the messages to the person (erased whole) and those that
// copied the person (which lose the address only).
type personMessages struct {
	to      []int64
	toTexts []string
	copies  []store.ErasureMessagesFindRow
}

func (s *Service) findMessages(ctx context.Context, p person, maxID int64) (personMessages, error) {
	q := store.New(s.pool)
	var out personMessages
	for after := int64(0); after < maxID; after += s.Window {
		rows, err := q.ErasureMessagesFind(ctx, store.ErasureMessagesFindParams{AfterID: after, UptoID: after + s.Window,
			AccountID: p.accountID, EmailLower: p.lower})
		if err != nil {
			return out, fmt.Errorf("find messages: %w", err)
		}
		for _, r := range rows {
			if r.ToPerson {
				out.to = append(out.to, r.ID)
				out.toTexts = append(out.toTexts, strconv.FormatInt(r.ID, 10))
			} else {
				out.copies = append(out.copies, r)
			}
		}
	}
	return out, nil
}

// scrubEvents scrubs the person's events, rows and batch elements, in windows of
// Window rows (of Window/64 batches: a batch holds up to 1,024 events).
func (s *Service) scrubEvents(ctx context.Context, p person, sends personSends, msgs personMessages, c counts) error {
	q := store.New(s.pool)
	var sub *string
	if p.subscriberID != nil {
		t := strconv.FormatInt(*p.subscriberID, 10)
		sub = &t
	}
	for after := int64(0); ; {
		upto, err := q.ErasureEventsWindowEnd(ctx, store.ErasureEventsWindowEndParams{AfterID: after, N: int32(s.Window)})
		if err != nil || upto == 0 {
			if err != nil {
				return fmt.Errorf("erase events: %w", err)
			}
			break
		}
		n, err := q.ErasureEventsScrub(ctx, store.ErasureEventsScrubParams{Pattern: p.pattern, AfterID: after,
			UptoID: upto, AccountID: p.accountID, SendIds: optional.NonNil(sends.idTexts),
			MessageIds: optional.NonNil(msgs.toTexts), SubscriberID: sub})
		if err != nil {
			return fmt.Errorf("erase events: %w", err)
		}
		c.add("events", n)
		after = upto
	}
	for after := int64(0); ; {
		upto, err := q.ErasureEventBatchesWindowEnd(ctx, store.ErasureEventBatchesWindowEndParams{AfterID: after,
			N: int32(max(s.Window/64, 1))})
		if err != nil || upto == 0 {
			if err != nil {
				return fmt.Errorf("erase events: %w", err)
			}
			return nil
		}
		n, err := q.ErasureEventBatchesScrub(ctx, store.ErasureEventBatchesScrubParams{Pattern: p.pattern, AfterID: after,
			UptoID: upto, AccountID: p.accountID, SendIds: optional.NonNil(sends.idTexts),
			MessageIds: optional.NonNil(msgs.toTexts)})
		if err != nil {
			return fmt.Errorf("erase events: %w", err)
		}
		c.add("events", n)
		after = upto
	}
}

func (s *Service) scrubHits(ctx context.Context, p person, maxID int64, sends personSends, msgs personMessages, c counts) error {
	if len(sends.ids) == 0 && len(msgs.to) == 0 {
		return nil
	}
	q := store.New(s.pool)
	for after := int64(0); after < maxID; after += s.Window {
		n, err := q.ErasureHitsScrub(ctx, store.ErasureHitsScrubParams{AfterID: after, UptoID: after + s.Window,
			AccountID: p.accountID, SendIds: optional.NonNil(sends.ids), MessageIds: optional.NonNil(msgs.to)})
		if err != nil {
			return fmt.Errorf("erase tracking hits: %w", err)
		}
		c.add("tracking_hits", n)
	}
	return nil
}

// scrubRest erases the tables the person reaches by address or subscriber alone.
func (s *Service) scrubRest(ctx context.Context, p person, sends personSends, c counts) error {
	q := store.New(s.pool)
	steps := []struct {
		name string
		run  func() (int64, error)
	}{
		{"sequence_enrollments", func() (int64, error) {
			return q.ErasureEnrollmentsScrub(ctx, store.ErasureEnrollmentsScrubParams{AccountID: p.accountID,
				SubscriberID: p.subscriberID, EmailLower: p.lower})
		}},
		{"sequence_send_data", func() (int64, error) {
			var total int64
			for _, jobs := range chunks(s.Chunk, sends.seqJobs) {
				n, err := q.ErasureSequenceDataDelete(ctx, store.ErasureSequenceDataDeleteParams{AccountID: p.accountID, JobIds: jobs})
				if err != nil {
					return total, err
				}
				total += n
			}
			return total, nil
		}},
		{"track_events", func() (int64, error) {
			return q.ErasureTrackEventsDelete(ctx, store.ErasureTrackEventsDeleteParams{AccountID: p.accountID,
				EmailLower: p.lower, SubscriberID: p.subscriberID})
		}},
		{"webhook_events", func() (int64, error) {
			return q.ErasureWebhookEventsScrub(ctx, store.ErasureWebhookEventsScrubParams{AccountID: p.accountID,
				EmailLower: &p.lower, Pattern: p.pattern})
		}},
		{"idempotency_keys", func() (int64, error) {
			return q.ErasureIdempotencyDelete(ctx, store.ErasureIdempotencyDeleteParams{AccountID: p.accountID, Pattern: p.pattern})
		}},
		{"soft_bounces", func() (int64, error) {
			return q.ErasureSoftBouncesDelete(ctx, store.ErasureSoftBouncesDeleteParams{AccountID: p.accountID, EmailLower: p.lower})
		}},
		{"audit_log", func() (int64, error) {
			return q.ErasureAuditTargetsScrub(ctx, store.ErasureAuditTargetsScrubParams{AccountID: p.accountID, Pattern: p.pattern})
		}},
	}
	for _, st := range steps {
		n, err := st.run()
		if err != nil {
			return fmt.Errorf("erase %s: %w", st.name, err)
		}
		c.add(st.name, n)
	}
	return nil
}

func (s *Service) scrubMessages(ctx context.Context, p person, msgs personMessages, c counts) error {
	q := store.New(s.pool)
	for _, ids := range chunks(s.Chunk, msgs.to) {
		n, err := q.ErasureMessageLinksDelete(ctx, store.ErasureMessageLinksDeleteParams{AccountID: p.accountID, Ids: ids})
		if err != nil {
			return fmt.Errorf("erase message links: %w", err)
		}
		c.add("message_links", n)
		var shas [][]byte
		err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
			q := store.New(tx)
			var err error
			if shas, err = q.ErasureMessageAttachmentsDelete(ctx, store.ErasureMessageAttachmentsDeleteParams{AccountID: p.accountID, Ids: ids}); err != nil {
				return err
			}
			if len(shas) > 0 {
				n, err := q.ErasureBlobsDeleteUnused(ctx, store.ErasureBlobsDeleteUnusedParams{AccountID: p.accountID, Shas: shas})
				if err != nil {
					return err
				}
				c.add("attachment_blobs", n)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("erase attachments: %w", err)
		}
		c.add("message_attachments", int64(len(shas)))
		n, err = q.ErasureMessagesScrub(ctx, store.ErasureMessagesScrubParams{AccountID: p.accountID, Ids: ids})
		if err != nil {
			return fmt.Errorf("erase messages: %w", err)
		}
		c.add("messages", n)
	}
	for _, m := range msgs.copies {
		n, err := q.ErasureMessageDropCopy(ctx, store.ErasureMessageDropCopyParams{AccountID: p.accountID, ID: m.ID,
			Cc: without(m.Cc, p.lower), Bcc: without(m.Bcc, p.lower)})
		if err != nil {
			return fmt.Errorf("erase message copies: %w", err)
		}
		c.add("message_copies", n)
	}
	return nil
}

func without(list []string, lower string) []string {
	out := []string{}
	for _, x := range list {
		if strings.ToLower(x) != lower {
			out = append(out, x)
		}
	}
	return out
}

func chunks[T any](size int, all []T) [][]T {
	var out [][]T
	for len(all) > 0 {
		n := min(len(all), max(size, 1))
		out = append(out, all[:n])
		all = all[n:]
	}
	return out
}

func fromStore(e store.Erasure) Result {
	r := Result{ID: e.ID, SubscriberID: e.SubscriberID, RequestedBy: e.RequestedBy, Status: e.Status,
		Counts: map[string]int64{}, CreatedAt: e.CreatedAt, CompletedAt: e.CompletedAt}
	_ = json.Unmarshal(e.Counts, &r.Counts)
	return r
}
