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

func source(kind string, c Claims) string {
	return kind + ":campaign:" + strconv.FormatInt(c.CampaignID, 10)
}

// oneClick applies a one-click opt-out in tx and returns its scope.
func oneClick(ctx context.Context, tx pgx.Tx, c Claims, email string) (string, error) {
	q := store.New(tx)
	scope, err := q.AccountUnsubscribeScope(ctx, c.AccountID)
	if err != nil {
		return "", fmt.Errorf("unsubscribe scope: %w", err)
	}
	if scope == ScopeList {
		lists, err := q.CampaignListIDsForUnsubscribe(ctx, c.AccountID, c.CampaignID)
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
				if err := event.Emit(ctx, tx, c.AccountID, event.SubscriberUnsubscribed, map[string]any{
					"email": email, "subscriber_id": c.SubscriberID, "campaign_id": c.CampaignID,
					"source": source("one-click", c), "scope": ScopeList, "list_ids": lists,
				}); err != nil {
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
	if _, err := q.SendSuppressLeftLists(ctx, c.AccountID, []int64{c.SubscriberID}); err != nil {
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
	return event.Emit(ctx, tx, c.AccountID, event.SubscriberUnsubscribed, map[string]any{
		"email": x.Email, "subscriber_id": c.SubscriberID, "campaign_id": c.CampaignID,
		"source": source(kind, c), "scope": ScopeAccount,
	})
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
	row, err := s.recipient(ctx, db, c)
	if err != nil {
		return Preferences{}, err
	}
	q := store.New(db)
	rows, err := q.MembershipPreferences(ctx, c.SubscriberID, c.AccountID)
	if err != nil {
		return Preferences{}, fmt.Errorf("preferences: %w", err)
	}
	p := Preferences{Recipient: Recipient{Claims: c, Language: row.Language}, Lists: make([]ListChoice, len(rows))}
	for i, r := range rows {
		p.Lists[i] = ListChoice{ID: r.ID, Name: r.Name, Subscribed: r.Status == "subscribed"}
	}
	p.Suppressed, err = q.SuppressionExists(ctx, c.AccountID, row.Email)
	if err != nil {
		return Preferences{}, err
	}
	return p, nil
}

// SetPreferences verifies token and makes the recipient subscribed to exactly the
// lists in subscribed among those it belongs to; ids of other lists are ignored.
func (s *Service) SetPreferences(ctx context.Context, token string, subscribed []int64) (Preferences, error) {
	c, err := s.signer.Verify(token)
	if err != nil {
		return Preferences{}, errNotFound
	}
	var out Preferences
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		row, err := s.recipient(ctx, tx, c)
		if err != nil {
			return err
		}
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
		}
		if err := preferenceEvents(ctx, tx, c, row.Email, src, left, joined); err != nil {
			return err
		}
		out, err = s.preferences(ctx, tx, c)
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
		if err := event.Emit(ctx, tx, c.AccountID, event.SubscriberUnsubscribed, map[string]any{
			"email": email, "subscriber_id": c.SubscriberID, "campaign_id": c.CampaignID,
			"source": src, "scope": ScopeList, "list_ids": left,
		}); err != nil {
			return err
		}
	}
	if len(joined) > 0 {
		slices.Sort(joined)
		return event.Emit(ctx, tx, c.AccountID, event.SubscriberSubscribed, map[string]any{
			"email": email, "subscriber_id": c.SubscriberID, "campaign_id": c.CampaignID, "source": src, "list_ids": joined,
		})
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
		row, err := s.recipient(ctx, tx, c)
		if err != nil {
			return err
		}
		if err := suppress(ctx, tx, c, row.Email, "preferences"); err != nil {
			return err
		}
		if err := recordOnSend(ctx, tx, c); err != nil {
			return err
		}
		out = Recipient{Claims: c, Language: row.Language, Scope: ScopeAccount}
		return nil
	})
	return out, err
}
