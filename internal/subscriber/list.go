package subscriber

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/store"
)

// List is a named audience of an account. Public lists can be signed up to from
// the public form; Optin says whether such a sign-up must confirm by email first.
type List struct {
	ID          int64
	Name        string
	Description string
	MemberCount int64
	ListOptin
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ListOptin is how a list takes public sign-ups and what its confirmation email is.
type ListOptin struct {
	// Optin is OptinSingle (a sign-up subscribes at once) or OptinDouble.
	Optin  string
	Public bool
	// Language (en, fr, de, …) picks the default confirmation email and pages.
	Language       string
	OptinFromEmail string
	OptinFromName  string
	// OptinTemplateID, when set, is the account's template the confirmation uses.
	OptinTemplateID *int64
}

// Opt-in modes of a list.
const (
	OptinSingle = "single"
	OptinDouble = "double"
)

// ListPatch changes a list; nil keeps the field. ClearOptinTemplate removes the
// confirmation template (the default email is used again).
type ListPatch struct {
	Name               *string
	Description        *string
	Optin              *string
	Public             *bool
	Language           *string
	OptinFromEmail     *string
	OptinFromName      *string
	OptinTemplateID    *int64
	ClearOptinTemplate bool
}

func checkListName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		return "", apperr.Invalidf("/name", "name must be 1 to 200 characters")
	}
	return name, nil
}

// checkOptin validates the opt-in settings of a list as they will be stored: a
// double opt-in list needs the From address of its confirmation email, and its
// template must be one of the account's.
func checkOptin(ctx context.Context, q *store.Queries, accountID int64, o *ListOptin) error {
	if o.Optin != OptinSingle && o.Optin != OptinDouble {
		return apperr.Invalidf("/optin", "optin must be single or double")
	}
	if !languageRe.MatchString(o.Language) {
		return apperr.Invalidf("/language", "language must be a language tag such as en, fr or de-CH")
	}
	if o.OptinFromEmail != "" {
		a, err := address.Parse(o.OptinFromEmail)
		if err != nil {
			return apperr.Invalidf("/optin_from_email", "%s", err.Error())
		}
		o.OptinFromEmail = a.Email
		// The confirmation leaves through the account's default sender: a From
		// that sender refuses would turn every public sign-up into an error.
		if _, err := sender.CheckFrom(ctx, q, accountID, nil, o.OptinFromEmail, "/optin_from_email"); err != nil {
			return err
		}
	}
	if len(o.OptinFromName) > 200 || strings.ContainsAny(o.OptinFromName, "\r\n\x00") {
		return apperr.Invalidf("/optin_from_name", "optin_from_name must be one line of at most 200 bytes")
	}
	// A public single opt-in list may need a confirmation too: an address that
	// left it can only come back by confirming.
	if (o.Optin == OptinDouble || o.Public) && o.OptinFromEmail == "" {
		return apperr.Invalidf("/optin_from_email", "a double opt-in or public list needs optin_from_email, the From of its confirmation email")
	}
	if o.OptinTemplateID != nil {
		if _, err := q.TemplateGet(ctx, store.TemplateGetParams{AccountID: accountID, ID: *o.OptinTemplateID}); err != nil {
			if err = postgres.Error(err, "template"); apperr.Is(err, apperr.NotFound) {
				return apperr.Invalidf("/optin_template_id", "template %d not found", *o.OptinTemplateID)
			}
			return err
		}
	}
	return nil
}

// languageRe is an empty language or a BCP 47-shaped tag.
var languageRe = regexp.MustCompile(`^([A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8}){0,4})?$`)

// CreateList adds a list; names are unique per account. An empty o.Optin is single.
func (s *Service) CreateList(ctx context.Context, accountID int64, name, description string, o ListOptin) (List, error) {
	name, err := checkListName(name)
	if err != nil {
		return List{}, err
	}
	if o.Optin == "" {
		o.Optin = OptinSingle
	}
	if err := checkOptin(ctx, store.New(s.pool), accountID, &o); err != nil {
		return List{}, err
	}
	// In a transaction, which carries the request's audit entry.
	var l store.List
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		l, err = store.New(tx).ListCreate(ctx, store.ListCreateParams{AccountID: accountID, Name: name, Description: description,
			Optin: o.Optin, Public: o.Public, Language: o.Language, OptinFromEmail: o.OptinFromEmail,
			OptinFromName: o.OptinFromName, OptinTemplateID: o.OptinTemplateID})
		return err
	})
	if err != nil {
		return List{}, postgres.Error(err, "a list with this name")
	}
	return listRow{ID: l.ID, AccountID: l.AccountID, Name: l.Name, Description: l.Description, CreatedAt: l.CreatedAt,
		UpdatedAt: l.UpdatedAt, Optin: l.Optin, Public: l.Public, Language: l.Language, OptinFromEmail: l.OptinFromEmail,
		OptinFromName: l.OptinFromName, OptinTemplateID: l.OptinTemplateID}.toList(), nil
}

// GetList returns a list with its member count.
func (s *Service) GetList(ctx context.Context, accountID, id int64) (List, error) {
	l, err := store.New(s.pool).ListGet(ctx, store.ListGetParams{AccountID: accountID, ID: id})
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
	Optin             string
	Public            bool
	Language          string
	OptinFromEmail    string
	OptinFromName     string
	OptinTemplateID   *int64
	MemberCount       int64
}

func (l listRow) toList() List {
	return List{ID: l.ID, Name: l.Name, Description: l.Description, MemberCount: l.MemberCount,
		ListOptin: ListOptin{Optin: l.Optin, Public: l.Public, Language: l.Language, OptinFromEmail: l.OptinFromEmail,
			OptinFromName: l.OptinFromName, OptinTemplateID: l.OptinTemplateID},
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

// UpdateList applies p and returns the list as it is now. The opt-in settings are
// checked as they end up (a list made double opt-in needs a From address, given now
// or before), in the transaction of the change.
func (s *Service) UpdateList(ctx context.Context, accountID, id int64, p ListPatch) (List, error) {
	if p.Name != nil {
		name, err := checkListName(*p.Name)
		if err != nil {
			return List{}, err
		}
		p.Name = &name
	}
	var out List
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		n, err := q.ListUpdate(ctx, store.ListUpdateParams{AccountID: accountID, ID: id, Name: p.Name,
			Description: p.Description, Optin: p.Optin, Public: p.Public, Language: p.Language,
			OptinFromEmail: p.OptinFromEmail, OptinFromName: p.OptinFromName,
			OptinTemplateID: p.OptinTemplateID, ClearOptinTemplate: p.ClearOptinTemplate})
		if err != nil {
			return postgres.Error(err, "a list with this name")
		}
		if n == 0 {
			return apperr.New(apperr.NotFound, "list not found")
		}
		l, err := q.ListGet(ctx, store.ListGetParams{AccountID: accountID, ID: id})
		if err != nil {
			return postgres.Error(err, "list")
		}
		out = listRow(l).toList()
		o := out.ListOptin
		if err := checkOptin(ctx, q, accountID, &o); err != nil {
			return err
		}
		if o.OptinFromEmail != out.OptinFromEmail { // normalised spelling
			out.OptinFromEmail = o.OptinFromEmail
			_, err = q.ListUpdate(ctx, store.ListUpdateParams{AccountID: accountID, ID: id, OptinFromEmail: &o.OptinFromEmail})
		}
		return err
	})
	return out, err
}

// DeleteList removes a list and its memberships; the subscribers stay. The
// memberships go first, 1,000 per statement, each its own short transaction: every
// account's event readers wait below the oldest running transaction, so the
// cascade of one DELETE of a large list would hold them all back for as long as it
// ran. The list row goes last and takes with it the few memberships added
// meanwhile. While it runs the list shows fewer members; a DeleteList cut short
// leaves the list in place with fewer members: delete it again.
func (s *Service) DeleteList(ctx context.Context, accountID, id int64) error {
	q := store.New(s.pool)
	for {
		n, err := q.ListMembersPurge(ctx, store.ListMembersPurgeParams{AccountID: accountID, ListID: id})
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
	}
	n, err := q.ListDelete(ctx, store.ListDeleteParams{AccountID: accountID, ID: id})
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
		if _, err := q.ListGet(ctx, store.ListGetParams{AccountID: accountID, ID: listID}); err != nil {
			return postgres.Error(err, "list")
		}
		owned, err := q.SubscriberIDsOwned(ctx, store.SubscriberIDsOwnedParams{AccountID: accountID, Ids: ids})
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
	var removed int64
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if _, err := q.ListGet(ctx, store.ListGetParams{AccountID: accountID, ID: listID}); err != nil {
			return postgres.Error(err, "list")
		}
		var err error
		removed, err = q.ListMembersRemove(ctx, store.ListMembersRemoveParams{AccountID: accountID, ListID: listID, SubscriberIds: ids})
		if err != nil || removed == 0 {
			return err
		}
		// A member taken out mid-send gets no more of the running campaigns to
		// lists it no longer belongs to.
		_, err = q.SendSuppressLeftLists(ctx, store.SendSuppressLeftListsParams{AccountID: accountID, SubscriberIds: ids})
		return err
	})
	return removed, err
}

// Membership is one list a subscriber is in, and how: subscribed, pending (a
// double opt-in not confirmed yet) or unsubscribed (it left the list).
type Membership struct {
	ListID   int64
	ListName string
	Status   string
	// CreatedAt is when it joined; StatusAt when its status last changed.
	CreatedAt time.Time
	StatusAt  time.Time
}

// Memberships returns the lists a subscriber of the account is in, by list name;
// another account's subscriber is not found.
func (s *Service) Memberships(ctx context.Context, accountID, subscriberID int64) ([]Membership, error) {
	q := store.New(s.pool)
	if _, err := q.SubscriberGet(ctx, store.SubscriberGetParams{AccountID: accountID, ID: subscriberID}); err != nil {
		return nil, postgres.Error(err, "subscriber")
	}
	rows, err := q.ListMembershipsOfSubscriber(ctx, store.ListMembershipsOfSubscriberParams{AccountID: accountID, SubscriberID: subscriberID})
	if err != nil {
		return nil, postgres.Error(err, "subscriber")
	}
	out := make([]Membership, 0, len(rows))
	for _, r := range rows {
		out = append(out, Membership{ListID: r.ListID, ListName: r.Name, Status: r.Status, CreatedAt: r.CreatedAt, StatusAt: r.StatusAt})
	}
	return out, nil
}
