package unsubscribe

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/suppression"
)

// Unsubscribe scopes: what a one-click unsubscribe removes the address from.
const (
	ScopeList    = "list"
	ScopeAccount = "account"
)

// ListChoice is one list on the preference page.
type ListChoice struct {
	ID         int64
	Name       string
	Subscribed bool
}

// Preferences is what the preference page shows: the lists the subscriber belongs
// to, and whether the address is suppressed for the whole account.
type Preferences struct {
	Recipient
	Lists      []ListChoice
	Suppressed bool
}

// source is the status_source, suppression source and event source of an
// opt-out: kind (one-click, preferences) and the campaign or message it came from.
func source(kind string, c Claims) string {
	if c.Kind == KindMessage {
		return kind + ":message:" + strconv.FormatInt(c.MessageID, 10)
	}
	return kind + ":campaign:" + strconv.FormatInt(c.CampaignID, 10)
}

// eventData is the data of an opt-out's event: fields, and what the opt-out came
// from, the address with the subscriber and the campaign, or with the message.
func eventData(c Claims, email string, fields map[string]any) map[string]any {
	fields["email"] = email
	if c.Kind == KindMessage {
		fields["message_id"] = c.MessageID
		return fields
	}
	fields["subscriber_id"], fields["campaign_id"] = c.SubscriberID, c.CampaignID
	return fields
}

// oneClick applies a one-click opt-out in tx and returns its scope. A message's
// link suppresses its address: the message went to an address, not to a
// subscriber's lists, and an unsubscribe suppression blocks marketing mail (the
// only category that carries the link) while receipts still go.
func oneClick(ctx context.Context, tx pgx.Tx, t target) (string, error) {
	c, email := t.Claims, t.email
	if c.Kind == KindMessage {
		return ScopeAccount, suppress(ctx, tx, c, email, "one-click")
	}
	q := store.New(tx)
	scope, err := q.AccountUnsubscribeScope(ctx, c.AccountID)
	if err != nil {
		return "", fmt.Errorf("unsubscribe scope: %w", err)
	}
	if scope == ScopeList {
		lists, err := q.CampaignListIDsForUnsubscribe(ctx, store.CampaignListIDsForUnsubscribeParams{AccountID: c.AccountID, CampaignID: c.CampaignID})
		if err != nil && !postgresNoRows(err) {
			return "", fmt.Errorf("campaign lists: %w", err)
		}
		if len(lists) > 0 {
			n, err := q.MembershipUnsubscribeLists(ctx, store.MembershipUnsubscribeListsParams{
				Source: source("one-click", c), AccountID: c.AccountID, SubscriberID: c.SubscriberID, ListIds: lists,
			})
			if err != nil {
				return "", fmt.Errorf("leave lists: %w", err)
			}
			if n > 0 { // a repeated click changes nothing, so reports nothing
				if err := leaveRunning(ctx, q, c); err != nil {
					return "", err
				}
				if err := event.Emit(ctx, tx, c.AccountID, event.SubscriberUnsubscribed, eventData(c, email,
					map[string]any{"source": source("one-click", c), "scope": ScopeList, "list_ids": lists})); err != nil {
					return "", err
				}
			}
			return ScopeList, nil
		}
		// A campaign to every subscriber has no list to leave: the only way to
		// honour the opt-out is the account-wide suppression.
	}
	return ScopeAccount, suppress(ctx, tx, c, email, "one-click")
}

// leaveRunning takes the subscriber's queued rows out of the running campaigns
// whose lists it no longer belongs to, so leaving a list mid-send stops that
// list's mail at once, not only from the next build.
func leaveRunning(ctx context.Context, q *store.Queries, c Claims) error {
	if _, err := q.SendSuppressLeftLists(ctx, store.SendSuppressLeftListsParams{AccountID: c.AccountID, SubscriberIds: []int64{c.SubscriberID}}); err != nil {
		return fmt.Errorf("leave running campaigns: %w", err)
	}
	return nil
}

func postgresNoRows(err error) bool { return apperr.Is(postgres.Error(err, ""), apperr.NotFound) }

func suppress(ctx context.Context, tx pgx.Tx, c Claims, email, kind string) error {
	x, inserted, err := suppression.Add(ctx, tx, c.AccountID, email, suppression.ReasonUnsubscribe, source(kind, c))
	if err != nil {
		return fmt.Errorf("suppress: %w", err)
	}
	if !inserted { // already suppressed: nothing changed, nothing to report
		return nil
	}
	return event.Emit(ctx, tx, c.AccountID, event.SubscriberUnsubscribed, eventData(c, x.Email,
		map[string]any{"source": source(kind, c), "scope": ScopeAccount}))
}

// Preferences verifies token and returns the recipient's lists (GET: changes nothing).
func (s *Service) Preferences(ctx context.Context, token string) (Preferences, error) {
	c, err := s.signer.Verify(token)
	if err != nil {
		return Preferences{}, errNotFound
	}
	return s.preferences(ctx, s.pool, c)
}

func (s *Service) preferences(ctx context.Context, db store.DBTX, c Claims) (Preferences, error) {
	t, err := s.resolve(ctx, db, c)
	if err != nil {
		return Preferences{}, err
	}
	return s.preferencesOf(ctx, db, t)
}

// preferencesOf reads the page of a resolved token: a subscriber's lists, or for a
// message to an address none (only "unsubscribe from everything").
func (s *Service) preferencesOf(ctx context.Context, db store.DBTX, t target) (Preferences, error) {
	q := store.New(db)
	p := Preferences{Recipient: Recipient{Claims: t.Claims, Language: t.language}, Lists: []ListChoice{}}
	if t.Kind == KindSend {
		rows, err := q.MembershipPreferences(ctx, store.MembershipPreferencesParams{SubscriberID: t.SubscriberID, AccountID: t.AccountID})
		if err != nil {
			return Preferences{}, fmt.Errorf("preferences: %w", err)
		}
		for _, r := range rows {
			p.Lists = append(p.Lists, ListChoice{ID: r.ID, Name: r.Name, Subscribed: r.Status == "subscribed"})
		}
	}
	var err error
	p.Suppressed, err = q.SuppressionExists(ctx, store.SuppressionExistsParams{AccountID: t.AccountID, Email: t.email})
	if err != nil {
		return Preferences{}, err
	}
	return p, nil
}

// SetPreferences verifies token and makes the recipient subscribed to exactly the
// lists in subscribed among those it belongs to (and the public lists among
// them); ids of other lists are ignored. A message's token names no subscriber,
// so it has no lists to set: the page comes back unchanged.
func (s *Service) SetPreferences(ctx context.Context, token string, subscribed []int64) (Preferences, error) {
	c, err := s.signer.Verify(token)
	if err != nil {
		return Preferences{}, errNotFound
	}
	var out Preferences
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		t, err := s.resolve(ctx, tx, c)
		if err != nil {
			return err
		}
		if t.Kind != KindSend {
			out, err = s.preferencesOf(ctx, tx, t)
			return err
		}
		c := t.Claims
		if subscribed == nil {
			subscribed = []int64{}
		}
		q := store.New(tx)
		src := source("preferences", c)
		changed, err := q.MembershipSetPreferences(ctx, store.MembershipSetPreferencesParams{
			Subscribed: subscribed, Source: src, AccountID: c.AccountID, SubscriberID: c.SubscriberID,
		})
		if err != nil {
			return fmt.Errorf("set preferences: %w", err)
		}
		joined, err := q.MembershipJoinPublic(ctx, store.MembershipJoinPublicParams{
			SubscriberID: c.SubscriberID, AccountID: c.AccountID, Source: src, Ids: subscribed,
		})
		if err != nil {
			return fmt.Errorf("join public lists: %w", err)
		}
		left := []int64{}
		for _, m := range changed {
			if m.Status == "subscribed" {
				joined = append(joined, m.ListID)
			} else {
				left = append(left, m.ListID)
			}
		}
		if len(left) > 0 {
			if err := leaveRunning(ctx, q, c); err != nil {
				return err
			}
			// Leaving a list through this campaign's link is this campaign's opt-out.
			if err := recordOnSend(ctx, tx, c, SourcePreferences); err != nil {
				return err
			}
		}
		if err := preferenceEvents(ctx, tx, c, t.email, src, left, joined); err != nil {
			return err
		}
		out, err = s.preferencesOf(ctx, tx, t)
		return err
	})
	return out, err
}

// preferenceEvents reports a preference submit as one-click reports its opt-out:
// subscriber.unsubscribed (scope list) for the lists left, and
// subscriber.subscribed for the lists joined or rejoined. A submit that changes
// nothing reports nothing.
func preferenceEvents(ctx context.Context, tx pgx.Tx, c Claims, email, src string, left, joined []int64) error {
	if len(left) > 0 {
		if err := event.Emit(ctx, tx, c.AccountID, event.SubscriberUnsubscribed, eventData(c, email,
			map[string]any{"source": src, "scope": ScopeList, "list_ids": left})); err != nil {
			return err
		}
	}
	if len(joined) > 0 {
		slices.Sort(joined)
		return event.Emit(ctx, tx, c.AccountID, event.SubscriberSubscribed, eventData(c, email,
			map[string]any{"source": src, "list_ids": joined}))
	}
	return nil
}

// UnsubscribeAll verifies token and suppresses the address for the whole account
// ("unsubscribe from everything"), recording the opt-out on the campaign's send.
func (s *Service) UnsubscribeAll(ctx context.Context, token string) (Recipient, error) {
	c, err := s.signer.Verify(token)
	if err != nil {
		return Recipient{}, errNotFound
	}
	var out Recipient
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		t, err := s.resolve(ctx, tx, c)
		if err != nil {
			return err
		}
		if err := suppress(ctx, tx, t.Claims, t.email, "preferences"); err != nil {
			return err
		}
		if err := recordOnSend(ctx, tx, t.Claims, SourcePreferences); err != nil {
			return err
		}
		out = Recipient{Claims: t.Claims, Language: t.language, Scope: ScopeAccount}
		return nil
	})
	return out, err
}
