package subscriber

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// List is a named audience of an account.
type List struct {
	ID          int64
	Name        string
	Description string
	MemberCount int64
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ListPatch renames a list or changes its description; nil keeps the field.
type ListPatch struct {
	Name        *string
	Description *string
}

func checkListName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		return "", apperr.Invalidf("/name", "name must be 1 to 200 characters")
	}
	return name, nil
}

// CreateList adds a list; names are unique per account.
func (s *Service) CreateList(ctx context.Context, accountID int64, name, description string) (List, error) {
	name, err := checkListName(name)
	if err != nil {
		return List{}, err
	}
	l, err := store.New(s.pool).ListCreate(ctx, store.ListCreateParams{AccountID: accountID, Name: name, Description: description})
	if err != nil {
		return List{}, postgres.Error(err, "a list with this name")
	}
	return List{ID: l.ID, Name: l.Name, Description: l.Description, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}, nil
}

// GetList returns a list with its member count.
func (s *Service) GetList(ctx context.Context, accountID, id int64) (List, error) {
	l, err := store.New(s.pool).ListGet(ctx, accountID, id)
	if err != nil {
		return List{}, postgres.Error(err, "list")
	}
	return listRow(l).toList(), nil
}

type listRow struct {
	ID, AccountID     int64
	Name, Description string
	CreatedAt         time.Time
	UpdatedAt         time.Time
	MemberCount       int64
}

func (l listRow) toList() List {
	return List{ID: l.ID, Name: l.Name, Description: l.Description, MemberCount: l.MemberCount,
		CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

// Lists returns up to limit lists after afterID in id order.
func (s *Service) Lists(ctx context.Context, accountID, afterID int64, limit int) ([]List, error) {
	rows, err := store.New(s.pool).ListList(ctx, store.ListListParams{AccountID: accountID, AfterID: afterID, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]List, len(rows))
	for i, r := range rows {
		out[i] = listRow(r).toList()
	}
	return out, nil
}

// UpdateList applies p and returns the list as it is now.
func (s *Service) UpdateList(ctx context.Context, accountID, id int64, p ListPatch) (List, error) {
	if p.Name != nil {
		name, err := checkListName(*p.Name)
		if err != nil {
			return List{}, err
		}
		p.Name = &name
	}
	n, err := store.New(s.pool).ListUpdate(ctx, store.ListUpdateParams{AccountID: accountID, ID: id, Name: p.Name, Description: p.Description})
	if err != nil {
		return List{}, postgres.Error(err, "a list with this name")
	}
	if n == 0 {
		return List{}, apperr.New(apperr.NotFound, "list not found")
	}
	return s.GetList(ctx, accountID, id)
}

// DeleteList removes a list and its memberships; the subscribers stay.
func (s *Service) DeleteList(ctx context.Context, accountID, id int64) error {
	n, err := store.New(s.pool).ListDelete(ctx, accountID, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return apperr.New(apperr.NotFound, "list not found")
	}
	return nil
}

// AddMembers puts the given subscribers in the list and returns how many joined.
// Every id must be one of the account's subscribers; otherwise nothing changes and
// the error names the first unknown one.
func (s *Service) AddMembers(ctx context.Context, accountID, listID int64, ids []int64) (int64, error) {
	var added int64
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if _, err := q.ListGet(ctx, accountID, listID); err != nil {
			return postgres.Error(err, "list")
		}
		owned, err := q.SubscriberIDsOwned(ctx, accountID, ids)
		if err != nil {
			return err
		}
		mine := make(map[int64]bool, len(owned))
		for _, id := range owned {
			mine[id] = true
		}
		for i, id := range ids {
			if !mine[id] {
				return apperr.Invalidf("/subscriber_ids/"+strconv.Itoa(i), "subscriber %d not found", id)
			}
		}
		added, err = q.ListMembersAdd(ctx, store.ListMembersAddParams{ListID: listID, AccountID: accountID, SubscriberIds: ids})
		return err
	})
	return added, err
}

// RemoveMembers takes the given subscribers out of the list; ids not in it are ignored.
func (s *Service) RemoveMembers(ctx context.Context, accountID, listID int64, ids []int64) (int64, error) {
	q := store.New(s.pool)
	if _, err := q.ListGet(ctx, accountID, listID); err != nil {
		return 0, postgres.Error(err, "list")
	}
	return q.ListMembersRemove(ctx, store.ListMembersRemoveParams{AccountID: accountID, ListID: listID, SubscriberIds: ids})
}
