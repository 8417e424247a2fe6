// Package export streams an account's data as CSV or NDJSON: subscribers (with the
// list page's filters), a campaign's recipients with their outcome and engagement,
// suppressions, messages and events. An export is read in keyset batches inside
// one REPEATABLE READ, READ ONLY transaction: one snapshot, so the file is
// consistent; at most one batch in memory, so memory stays flat whatever the
// size; and no transaction id, so it does not hold back the events outbox, whose
// readers stop below the oldest running transaction id (a read-only transaction
// never gets one: TestExportDoesNotHoldBackEvents).
package export

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/store"
)

// Batch is how many rows one statement of an export reads.
const Batch = 5000

// Kinds of export.
const (
	Subscribers  = "subscribers"
	Recipients   = "recipients"
	Suppressions = "suppressions"
	Messages     = "messages"
	Events       = "events"
)

// Request says what to export.
type Request struct {
	AccountID int64
	Kind      string
	// CampaignID names the campaign of a recipients export.
	CampaignID int64
	// The subscribers' filters, as the list page takes them.
	Status      *string
	EmailPrefix *string // LIKE-escaped, lower case
	ListID      *int64
	Membership  []string
	// The messages' filters, as the messages list takes them.
	MessageStatus, MessageTo, MessageTag *string
}

// Columns are the columns of each kind, in order.
var Columns = map[string][]string{
	Subscribers:  {"id", "email", "name", "status", "attributes", "created_at", "updated_at"},
	Recipients:   {"send_id", "subscriber_id", "email", "status", "attempts", "sent_at", "feedback", "error", "opens", "human_opens", "clicks", "human_clicks"},
	Suppressions: {"email", "reason", "source", "created_at"},
	Messages:     {"id", "to", "from", "subject", "category", "tags", "created_at", "status", "sent_at", "feedback"},
	Events:       {"id", "type", "timestamp", "data"},
}

// Service streams exports.
type Service struct {
	pool *pgxpool.Pool
	// Batch overrides the batch size (tests cross batches with a small one).
	Batch int32
}

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool, Batch: Batch} }

// Check answers not found for a campaign that is not the account's, before a
// stream starts (after, the status is sent).
func (s *Service) Check(ctx context.Context, r Request) error {
	if r.Kind != Recipients {
		return nil
	}
	ok, err := store.New(s.pool).ExportCampaignExists(ctx, store.ExportCampaignExistsParams{AccountID: r.AccountID, ID: r.CampaignID})
	if err != nil {
		return err
	}
	if !ok {
		return apperr.New(apperr.NotFound, "campaign not found")
	}
	return nil
}

// Stream writes the export r to w and returns how many rows it wrote. start, if
// not nil, runs once the snapshot is taken, before the first row (the HTTP
// handler sends its headers there).
func (s *Service) Stream(ctx context.Context, r Request, w Writer) (int64, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	q := store.New(tx)
	if err := q.ExportReadInOrder(ctx); err != nil {
		return 0, err
	}
	var n int64
	emit := func(row []any) error {
		n++
		return w.Row(row)
	}
	if err := s.batches(ctx, q, r, emit); err != nil {
		return n, err
	}
	if err := w.Flush(); err != nil {
		return n, err
	}
	return n, tx.Commit(ctx)
}

func (s *Service) batches(ctx context.Context, q *store.Queries, r Request, emit func([]any) error) error {
	lim := s.Batch
	switch r.Kind {
	case Subscribers:
		after := int64(0)
		for {
			rows, err := q.ExportSubscribers(ctx, store.ExportSubscribersParams{AccountID: r.AccountID, AfterID: after,
				Status: r.Status, EmailPrefix: r.EmailPrefix, ListID: r.ListID, MembershipStatuses: r.Membership, Lim: lim})
			if err != nil {
				return err
			}
			for _, x := range rows {
				if err := emit([]any{x.ID, x.Email, x.Name, x.Status, x.Attributes, x.CreatedAt, x.UpdatedAt}); err != nil {
					return err
				}
				after = x.ID
			}
			if len(rows) < int(lim) {
				return nil
			}
		}
	case Recipients:
		after := int64(0)
		for {
			rows, err := q.ExportCampaignRecipients(ctx, store.ExportCampaignRecipientsParams{AccountID: r.AccountID,
				CampaignID: r.CampaignID, AfterID: after, Lim: lim})
			if err != nil {
				return err
			}
			for _, x := range rows {
				if err := emit([]any{x.ID, x.SubscriberID, x.Email, x.Status, int64(x.Attempts), x.SentAt, x.Feedback,
					x.LastError, x.Opens, x.HumanOpens, x.Clicks, x.HumanClicks}); err != nil {
					return err
				}
				after = x.ID
			}
			if len(rows) < int(lim) {
				return nil
			}
		}
	case Suppressions:
		after := ""
		for {
			rows, err := q.ExportSuppressions(ctx, store.ExportSuppressionsParams{AccountID: r.AccountID, AfterEmail: after, Lim: lim})
			if err != nil {
				return err
			}
			for _, x := range rows {
				if err := emit([]any{x.EmailLower, x.Reason, x.Source, x.CreatedAt}); err != nil {
					return err
				}
				after = x.EmailLower
			}
			if len(rows) < int(lim) {
				return nil
			}
		}
	case Messages:
		after := int64(0)
		for {
			rows, err := q.ExportMessages(ctx, store.ExportMessagesParams{AccountID: r.AccountID, AfterID: after,
				Status: r.MessageStatus, ToEmail: r.MessageTo, Tag: r.MessageTag, Lim: lim})
			if err != nil {
				return err
			}
			for _, x := range rows {
				if err := emit([]any{x.ID, x.ToEmail, x.FromEmail, x.Subject, x.Category, x.Tags, x.CreatedAt, x.Status,
					x.SentAt, x.Feedback}); err != nil {
					return err
				}
				after = x.ID
			}
			if len(rows) < int(lim) {
				return nil
			}
		}
	case Events:
		var afterXid, afterID int64
		for {
			rows, err := q.ExportEvents(ctx, store.ExportEventsParams{AccountID: r.AccountID, AfterXid: afterXid, AfterID: afterID, Lim: lim})
			if err != nil {
				return err
			}
			for _, x := range rows {
				if err := emit([]any{"evt_" + fmt.Sprint(x.ID), x.Type, x.OccurredAt, x.Data}); err != nil {
					return err
				}
				afterXid, afterID = x.Xid, x.ID
			}
			if len(rows) < int(lim) {
				return nil
			}
		}
	}
	return apperr.Invalidf("", "unknown export %q", r.Kind)
}
