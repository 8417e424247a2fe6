// Package subscriber manages an account's subscribers, its lists and their members,
// and bulk imports. Every method takes the account first and every query filters on
// it, so another account's ids behave exactly like ids that do not exist.
package subscriber

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/quota"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/suppression"
)

// Subscriber statuses.
const (
	StatusPending      = "pending"
	StatusConfirmed    = "confirmed"
	StatusUnsubscribed = "unsubscribed"
)

// Service manages subscribers and lists.
type Service struct {
	pool *pgxpool.Pool
	// Erased recognises erased addresses: one that comes back (a create, an
	// import, a change of address) is suppressed again. nil recognises none.
	Erased *suppression.Erased
}

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

// Subscriber is one address of an account.
type Subscriber struct {
	ID         int64
	Email      string
	Name       string
	Attributes map[string]any
	Status     string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Input is a new subscriber. Status is pending or confirmed; empty means pending.
type Input struct {
	Email      string
	Name       string
	Attributes map[string]any
	Status     string
}

// Patch changes a subscriber; nil fields are kept, Attributes replaces the whole set.
type Patch struct {
	Email      *string
	Name       *string
	Attributes map[string]any
	Status     *string
}

// Filter narrows a listing. AfterID is the keyset position (0: from the start).
type Filter struct {
	Status *string
	ListID *int64
	// Membership narrows a list_id filter by membership status: subscribed (the
	// default), unsubscribed, pending or any.
	Membership  string
	EmailPrefix *string
	AfterID     int64
	Limit       int
}

// sqlArgs are the filter's email prefix (LIKE wildcards escaped) and the
// membership statuses a list_id filter counts.
func (f Filter) sqlArgs() (prefix *string, membership []string, err error) {
	if f.EmailPrefix != nil {
		p := likePrefix(*f.EmailPrefix)
		prefix = &p
	}
	switch f.Membership {
	case "", "subscribed":
		membership = []string{"subscribed"}
	case "unsubscribed", "pending":
		membership = []string{f.Membership}
	case "any":
		membership = []string{"subscribed", "unsubscribed", "pending"}
	default:
		return nil, nil, apperr.Invalidf("/membership", "membership must be subscribed, unsubscribed, pending or any")
	}
	return prefix, membership, nil
}

// CountBound is where Count stops counting: an exact total up to it, "more
// than" beyond (counting further would cost a page view a scan of the account).
const CountBound = 100_000

// Count returns how many subscribers f selects (its AfterID and Limit aside), and
// whether that is exact: at CountBound it stops and answers CountBound, not exact.
func (s *Service) Count(ctx context.Context, accountID int64, f Filter) (n int64, exact bool, err error) {
	prefix, membership, err := f.sqlArgs()
	if err != nil {
		return 0, false, err
	}
	n, err = store.New(s.pool).SubscriberCountBounded(ctx, store.SubscriberCountBoundedParams{
		AccountID: accountID, Status: f.Status, EmailPrefix: prefix, ListID: f.ListID,
		MembershipStatuses: membership, Bound: CountBound,
	})
	if err != nil {
		return 0, false, err
	}
	return n, n < CountBound, nil
}

func fromStore(s store.Subscriber) Subscriber {
	attrs := map[string]any{}
	_ = json.Unmarshal(s.Attributes, &attrs) // the column is CHECKed to be an object
	return Subscriber{ID: s.ID, Email: s.Email, Name: s.Name, Attributes: attrs, Status: s.Status,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

func marshalAttrs(a map[string]any) ([]byte, error) {
	if a == nil {
		return []byte("{}"), nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, apperr.Invalidf("/attributes", "attributes must be a JSON object")
	}
	return b, nil
}

// Create adds a subscriber; an address the account already has (in any case) is a conflict.
func (s *Service) Create(ctx context.Context, accountID int64, in Input) (Subscriber, error) {
	addr, err := address.Parse(in.Email)
	if err != nil {
		return Subscriber{}, apperr.Invalidf("/email", "%s", err.Error())
	}
	if in.Status == "" {
		in.Status = StatusPending
	}
	if in.Status != StatusPending && in.Status != StatusConfirmed {
		return Subscriber{}, apperr.Invalidf("/status", "status must be pending or confirmed")
	}
	attrs, err := marshalAttrs(in.Attributes)
	if err != nil {
		return Subscriber{}, err
	}
	var row store.Subscriber
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := quota.Reserve(ctx, store.New(tx), accountID, quota.Subscribers); err != nil {
			return err
		}
		var err error
		row, err = store.New(tx).SubscriberCreate(ctx, store.SubscriberCreateParams{
			AccountID: accountID, Email: addr.Email, EmailLower: addr.Lower, Name: in.Name,
			Attributes: attrs, Status: in.Status,
		})
		if err != nil {
			return err
		}
		if _, err := s.Erased.Recall(ctx, tx, accountID, addr.Lower); err != nil {
			return err
		}
		return sequence.EnrollSegments(ctx, tx, accountID, row.ID, nil)
	})
	if err != nil {
		return Subscriber{}, postgres.Error(err, "a subscriber with this email")
	}
	return fromStore(row), nil
}

// Get returns one subscriber.
func (s *Service) Get(ctx context.Context, accountID, id int64) (Subscriber, error) {
	row, err := store.New(s.pool).SubscriberGet(ctx, store.SubscriberGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Subscriber{}, postgres.Error(err, "subscriber")
	}
	return fromStore(row), nil
}

// List returns up to f.Limit subscribers after f.AfterID in id order.
func (s *Service) List(ctx context.Context, accountID int64, f Filter) ([]Subscriber, error) {
	prefix, membership, err := f.sqlArgs()
	if err != nil {
		return nil, err
	}
	rows, err := store.New(s.pool).SubscriberList(ctx, store.SubscriberListParams{
		AccountID: accountID, AfterID: f.AfterID, Status: f.Status, EmailPrefix: prefix,
		ListID: f.ListID, MembershipStatuses: membership, Lim: int32(f.Limit),
	})
	if err != nil {
		return nil, err
	}
	out := make([]Subscriber, len(rows))
	for i, r := range rows {
		out[i] = fromStore(r)
	}
	return out, nil
}

// Update applies p. A new email is validated and must not collide with another subscriber.
func (s *Service) Update(ctx context.Context, accountID, id int64, p Patch) (Subscriber, error) {
	arg := store.SubscriberUpdateParams{AccountID: accountID, ID: id, Name: p.Name, Status: p.Status}
	if p.Email != nil {
		addr, err := address.Parse(*p.Email)
		if err != nil {
			return Subscriber{}, apperr.Invalidf("/email", "%s", err.Error())
		}
		arg.Email, arg.EmailLower = &addr.Email, &addr.Lower
	}
	if p.Status != nil {
		switch *p.Status {
		case StatusPending, StatusConfirmed, StatusUnsubscribed:
		default:
			return Subscriber{}, apperr.Invalidf("/status", "status must be pending, confirmed or unsubscribed")
		}
	}
	if p.Attributes != nil {
		attrs, err := marshalAttrs(p.Attributes)
		if err != nil {
			return Subscriber{}, err
		}
		arg.Attributes = attrs
	}
	// A change of attributes or status may bring the subscriber into a segment a
	// sequence triggers on: tested in the update's transaction.
	var row store.Subscriber
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if row, err = store.New(tx).SubscriberUpdate(ctx, arg); err != nil {
			return err
		}
		if arg.EmailLower != nil {
			if _, err := s.Erased.Recall(ctx, tx, accountID, *arg.EmailLower); err != nil {
				return err
			}
		}
		if p.Attributes == nil && p.Status == nil {
			return nil
		}
		return sequence.EnrollSegments(ctx, tx, accountID, row.ID, nil)
	})
	if err != nil {
		return Subscriber{}, postgres.Error(err, "subscriber")
	}
	return fromStore(row), nil
}

// Delete removes a subscriber and its memberships; its sends stay as history.
func (s *Service) Delete(ctx context.Context, accountID, id int64) error {
	// In a transaction, which carries the request's audit entry.
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		n, err := store.New(tx).SubscriberDelete(ctx, store.SubscriberDeleteParams{AccountID: accountID, ID: id})
		if err != nil {
			return err
		}
		if n == 0 {
			return apperr.New(apperr.NotFound, "subscriber not found")
		}
		return nil
	})
}

// Confirm moves a pending subscriber to confirmed in one compare-and-set; a confirmed
// one is returned unchanged, an unsubscribed one is a conflict carrying its status.
func (s *Service) Confirm(ctx context.Context, accountID, id int64) (Subscriber, error) {
	q := store.New(s.pool)
	var row store.Subscriber
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if row, err = store.New(tx).SubscriberConfirm(ctx, store.SubscriberConfirmParams{AccountID: accountID, ID: id}); err != nil {
			return err
		}
		return sequence.EnrollSegments(ctx, tx, accountID, row.ID, nil)
	})
	if err == nil {
		return fromStore(row), nil
	}
	if err = postgres.Error(err, "subscriber"); !apperr.Is(err, apperr.NotFound) {
		return Subscriber{}, err
	}
	status, err := q.SubscriberStatusGet(ctx, store.SubscriberStatusGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Subscriber{}, postgres.Error(err, "subscriber")
	}
	return Subscriber{}, &apperr.Error{Code: apperr.Conflict,
		Message: "an unsubscribed subscriber cannot be confirmed", Extra: map[string]any{"current_status": status}}
}

// likePrefix escapes LIKE's wildcards so the prefix matches literally; the query
// appends the % itself. Addresses are matched in lower case.
func likePrefix(p string) string {
	out := make([]byte, 0, len(p)+4)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c == '%' || c == '_' || c == '\\' {
			out = append(out, '\\')
		}
		out = append(out, c)
	}
	return string(out)
}
