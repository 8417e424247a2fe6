package operator

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/audit"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Service is the operator's management of accounts.
type Service struct {
	pool     *pgxpool.Pool
	accounts *account.Service
}

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool, accounts *account.Service) *Service {
	return &Service{pool: pool, accounts: accounts}
}

// Quotas are the limits an account is held to; nil is no limit.
type Quotas struct {
	Subscribers *int64
	Senders     *int64
	// MessagesPerDay bounds the messages the account's API accepts per UTC day
	// (internal/quota); campaign sends are bounded by Subscribers instead.
	MessagesPerDay *int64
}

// QuotaUpdate changes the quotas whose Set flag is true (to a value, or nil: no
// limit) and leaves the others.
type QuotaUpdate struct {
	SetSubscribers, SetSenders, SetMessagesPerDay bool
	Quotas
}

// Account is a tenant as the operator sees it.
type Account struct {
	ID          int64
	Name        string
	PublicID    string
	CreatedAt   time.Time
	SuspendedAt *time.Time
	Quotas      Quotas
}

func fromStore(a store.Account) Account {
	return Account{ID: a.ID, Name: a.Name, PublicID: a.PublicID, CreatedAt: a.CreatedAt, SuspendedAt: a.SuspendedAt,
		Quotas: Quotas{Subscribers: a.QuotaSubscribers, Senders: a.QuotaSenders, MessagesPerDay: a.QuotaMessagesPerDay}}
}

func notFound(id int64) error { return apperr.New(apperr.NotFound, "account %d not found", id) }

func checkQuotas(u QuotaUpdate) error {
	for _, q := range []struct {
		set     bool
		v       *int64
		pointer string
	}{{u.SetSubscribers, u.Subscribers, "/quotas/subscribers"}, {u.SetSenders, u.Senders, "/quotas/senders"},
		{u.SetMessagesPerDay, u.MessagesPerDay, "/quotas/messages_per_day"}} {
		if q.set && q.v != nil && *q.v < 0 {
			return apperr.Invalidf(q.pointer, "a quota is 0 or more (null: no limit)")
		}
	}
	return nil
}

// Create makes an account with its first API key (returned once) and quotas, in
// one transaction with its audit entry.
func (s *Service) Create(ctx context.Context, name string, quotas QuotaUpdate) (Account, string, error) {
	if err := checkQuotas(quotas); err != nil {
		return Account{}, "", err
	}
	var out Account
	var token string
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		acc, tok, err := account.CreateIn(ctx, q, name)
		if err != nil {
			return err
		}
		a, err := setQuotas(ctx, q, acc.ID, quotas)
		if err != nil {
			return err
		}
		out, token = fromStore(a), tok
		return record(ctx, q, a.ID, "account.create", map[string]any{"name": a.Name, "quotas": quotaDetail(out.Quotas)})
	})
	return out, token, postgres.Error(err, "account")
}

// List returns up to limit accounts after the id after, in id order; deleted
// accounts are not listed.
func (s *Service) List(ctx context.Context, after int64, limit int32) ([]Account, error) {
	rows, err := store.New(s.pool).OperatorAccountList(ctx, store.OperatorAccountListParams{AfterID: after, N: limit})
	if err != nil {
		return nil, err
	}
	out := make([]Account, len(rows))
	for i, r := range rows {
		out[i] = fromStore(r)
	}
	return out, nil
}

// Get returns an account (NotFound once deleted).
func (s *Service) Get(ctx context.Context, id int64) (Account, error) {
	a, err := store.New(s.pool).OperatorAccountGet(ctx, id)
	if err != nil {
		return Account{}, postgres.Error(err, "account")
	}
	return fromStore(a), nil
}

// SetQuotas changes an account's quotas, with its audit entry.
func (s *Service) SetQuotas(ctx context.Context, id int64, u QuotaUpdate) (Account, error) {
	if err := checkQuotas(u); err != nil {
		return Account{}, err
	}
	var out Account
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		a, err := setQuotas(ctx, q, id, u)
		if err != nil {
			return postgres.Error(err, "account")
		}
		out = fromStore(a)
		return record(ctx, q, id, "account.quotas", map[string]any{"quotas": quotaDetail(out.Quotas)})
	})
	return out, err
}

func setQuotas(ctx context.Context, q *store.Queries, id int64, u QuotaUpdate) (store.Account, error) {
	return q.OperatorAccountSetQuotas(ctx, store.OperatorAccountSetQuotasParams{
		SetSubscribers: u.SetSubscribers, Subscribers: u.Subscribers,
		SetSenders: u.SetSenders, Senders: u.Senders,
		SetMessagesPerDay: u.SetMessagesPerDay, MessagesPerDay: u.MessagesPerDay, ID: id})
}

// quotaDetail is the audit detail of quotas: each by name, null for no limit.
func quotaDetail(q Quotas) map[string]any {
	return map[string]any{"subscribers": q.Subscribers, "senders": q.Senders, "messages_per_day": q.MessagesPerDay}
}

// Suspend stops an account: its keys and sessions are refused with 403 and none
// of its work (campaign sends, messages, sequence steps, event deliveries) is
// claimed; what is in flight finishes. The executors are woken to drop its
// campaigns from their rotation.
func (s *Service) Suspend(ctx context.Context, id int64) (Account, error) {
	return s.transition(ctx, id, "account.suspend", func(q *store.Queries) (store.Account, error) {
		return q.OperatorAccountSuspend(ctx, id)
	})
}

// Resume lets a suspended account work again: its queued rows are claimed from
// where they stopped (nothing was taken from them), and the executors are woken
// at once rather than at their next poll.
func (s *Service) Resume(ctx context.Context, id int64) (Account, error) {
	return s.transition(ctx, id, "account.resume", func(q *store.Queries) (store.Account, error) {
		return q.OperatorAccountResume(ctx, id)
	})
}

func (s *Service) transition(ctx context.Context, id int64, action string, change func(*store.Queries) (store.Account, error)) (Account, error) {
	var out Account
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		a, err := change(q)
		if err != nil {
			return postgres.Error(err, "account")
		}
		out = fromStore(a)
		if err := record(ctx, q, id, action, nil); err != nil {
			return err
		}
		return q.CampaignNotify(ctx, store.CampaignNotifyParams{Channel: postgres.CampaignChannel, Payload: "resume"})
	})
	return out, err
}

// Delete marks an account deleted: from this moment it is gone from the API (its
// keys and sessions no longer authenticate, the operator no longer lists it) and
// none of its work is claimed; the Purger removes its rows in batches. The audit
// entry is written with the mark, and goes with the account's log when the
// account is purged: the lasting record of a deletion is the process log
// (httpapi logs every operator action; the purger logs the purge).
func (s *Service) Delete(ctx context.Context, id int64) error {
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if _, err := q.OperatorAccountMarkDeleted(ctx, id); err != nil {
			if apperr.Is(postgres.Error(err, "account"), apperr.NotFound) {
				return notFound(id)
			}
			return err
		}
		return record(ctx, q, id, "account.delete", nil)
	})
}

// Origin is where an operator action came from, as its audit entry records it.
type Origin struct {
	RequestID  string
	SourceAddr string
}

type originKey struct{}

// WithOrigin returns ctx whose operator actions are recorded as coming from o.
// Without one an action is recorded as the command line's (`sendonce account`).
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// record writes the operator's audit entry of an action on account id, in q's
// transaction: it commits with the change or not at all.
func record(ctx context.Context, q *store.Queries, id int64, action string, detail map[string]any) error {
	o, ok := ctx.Value(originKey{}).(Origin)
	if !ok {
		o = Origin{SourceAddr: "command line"}
	}
	return audit.Write(ctx, q, audit.Entry{AccountID: id, Actor: access.Operator, Action: action,
		TargetType: "account", TargetID: strconv.FormatInt(id, 10), RequestID: o.RequestID, SourceAddr: o.SourceAddr,
		Detail: detail})
}
