// Package person reads what an account keeps about one person: the activity
// (sends and their outcomes, messages, opens and clicks, opt-ins and opt-outs,
// sequence steps, suppressions), and the data export of GDPR Art. 15 (profile,
// attributes, lists, the evidence of consent, and the activity). Every read
// reaches the person through indexes, so it costs their history, not the account's.
package person

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// MaxExportItems bounds the activity one export carries: a person's history is
// small, but a bound keeps one request's memory bounded whatever happened.
const MaxExportItems = 50_000

// Service reads people.
type Service struct {
	pool *pgxpool.Pool
	// Now stamps exports; tests may set it.
	Now func() time.Time
}

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool, Now: time.Now} }

// Item is one thing that happened to the person. Kind is send (a campaign's or a
// sequence step's), message, open, click, sequence_step, suppression, or the type
// of an opt-in, opt-out or suppression event (subscriber.unsubscribed, …).
type Item struct {
	At    time.Time
	Kind  string
	RefID int64
	Data  json.RawMessage
}

// Cursor is the position after the last item of a page (items older than it follow).
type Cursor struct {
	At   time.Time
	Kind string
	ID   int64
}

// Activity returns up to limit items of the subscriber's activity, newest first,
// older than before (nil: from the newest). Another account's subscriber is not found.
func (s *Service) Activity(ctx context.Context, accountID, subscriberID int64, before *Cursor, limit int) ([]Item, error) {
	sub, err := store.New(s.pool).ActivitySubscriber(ctx, store.ActivitySubscriberParams{AccountID: accountID, ID: subscriberID})
	if err != nil {
		return nil, postgres.Error(err, "subscriber")
	}
	return s.activity(ctx, s.pool, accountID, sub.ID, sub.EmailLower, before, limit)
}

func (s *Service) activity(ctx context.Context, db store.DBTX, accountID, subscriberID int64, lower string, before *Cursor, limit int) ([]Item, error) {
	arg := store.ActivityListParams{AccountID: accountID, SubscriberID: subscriberID, EmailLower: lower, Lim: int32(limit)}
	if before != nil {
		arg.BeforeAt, arg.BeforeKind, arg.BeforeID = &before.At, before.Kind, before.ID
	}
	rows, err := store.New(db).ActivityList(ctx, arg)
	if err != nil {
		return nil, err
	}
	out := make([]Item, len(rows))
	for i, r := range rows {
		out[i] = Item{At: r.At, Kind: r.Kind, RefID: r.RefID, Data: r.Data}
	}
	return out, nil
}

// Profile is the subscriber as the account keeps it.
type Profile struct {
	ID          int64
	Email       string
	Name        string
	Attributes  json.RawMessage
	Status      string
	Signup      bool
	OptinSentAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Consent is one list membership and the evidence of how and when it was given,
// changed or withdrawn: Source names the sign-up form, the confirmation link,
// the preference page, a one-click unsubscribe or the API, and StatusAt when.
type Consent struct {
	ListID    int64
	ListName  string
	Status    string
	Source    string
	StatusAt  time.Time
	CreatedAt time.Time
}

// Export is everything the account keeps about one person.
type Export struct {
	GeneratedAt time.Time
	// Profile is nil for an address without a subscriber (a message's recipient).
	Profile  *Profile
	Email    string
	Consents []Consent
	Activity []Item
	// Truncated says the activity stopped at MaxExportItems.
	Truncated bool
}

// ExportSubscriber returns the export of a subscriber of the account, read in one
// snapshot (a read-only transaction) so its parts agree.
func (s *Service) ExportSubscriber(ctx context.Context, accountID, subscriberID int64) (Export, error) {
	var out Export
	err := s.snapshot(ctx, func(tx pgx.Tx) error {
		q := store.New(tx)
		sub, err := q.ActivitySubscriber(ctx, store.ActivitySubscriberParams{AccountID: accountID, ID: subscriberID})
		if err != nil {
			return postgres.Error(err, "subscriber")
		}
		out.Email = sub.Email
		out.Profile = &Profile{ID: sub.ID, Email: sub.Email, Name: sub.Name, Attributes: sub.Attributes, Status: sub.Status,
			Signup: sub.Signup, OptinSentAt: sub.OptinSentAt, CreatedAt: sub.CreatedAt, UpdatedAt: sub.UpdatedAt}
		ms, err := q.ActivityConsents(ctx, store.ActivityConsentsParams{AccountID: accountID, SubscriberID: subscriberID})
		if err != nil {
			return err
		}
		out.Consents = make([]Consent, len(ms))
		for i, m := range ms {
			out.Consents[i] = Consent{ListID: m.ListID, ListName: m.ListName, Status: m.Status, Source: m.StatusSource,
				StatusAt: m.StatusAt, CreatedAt: m.CreatedAt}
		}
		return s.exportActivity(ctx, tx, accountID, sub.ID, sub.EmailLower, &out)
	})
	return out, err
}

// ExportAddress returns the export of an address of the account: its subscriber's
// when it has one, or else what is kept of the address alone (messages to it, its
// suppression, its opt-out events).
func (s *Service) ExportAddress(ctx context.Context, accountID int64, email, lower string) (Export, error) {
	id, err := store.New(s.pool).ErasureSubscriberByEmail(ctx, store.ErasureSubscriberByEmailParams{AccountID: accountID, EmailLower: lower})
	if err == nil {
		return s.ExportSubscriber(ctx, accountID, id)
	}
	if !postgres.NoRows(err) {
		return Export{}, err
	}
	out := Export{Email: email, Consents: []Consent{}}
	err = s.snapshot(ctx, func(tx pgx.Tx) error { return s.exportActivity(ctx, tx, accountID, 0, lower, &out) })
	return out, err
}

func (s *Service) exportActivity(ctx context.Context, tx pgx.Tx, accountID, subscriberID int64, lower string, out *Export) error {
	out.GeneratedAt = s.Now().UTC()
	items, err := s.activity(ctx, tx, accountID, subscriberID, lower, nil, MaxExportItems+1)
	if err != nil {
		return err
	}
	if len(items) > MaxExportItems {
		items, out.Truncated = items[:MaxExportItems], true
	}
	out.Activity = items
	return nil
}

// snapshot runs fn in a REPEATABLE READ, READ ONLY transaction: one snapshot, and
// no transaction id, so it holds back no account's events.
func (s *Service) snapshot(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// ExportSender is the From (address and name) of the mail that carried a
// preference link — its campaign's, or its message's — which the person's data
// export is mailed from; not_found when neither is the account's or has a From.
func (s *Service) ExportSender(ctx context.Context, accountID, campaignID, messageID int64) (email, name string, err error) {
	from, err := store.New(s.pool).ActivityExportSender(ctx, store.ActivityExportSenderParams{
		AccountID: accountID, CampaignID: campaignID, MessageID: messageID})
	if err != nil {
		return "", "", err
	}
	if len(from) == 0 {
		return "", "", apperr.New(apperr.NotFound, "no such unsubscribe link")
	}
	return from[0].FromEmail, from[0].FromName, nil
}
