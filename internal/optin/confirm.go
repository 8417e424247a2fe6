package optin

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/store"
)

// purpose separates confirmation tokens from unsubscribe tokens signed with the
// same key ring.
const purpose = "optin-confirm"

// confirmSource is the status_source of memberships a confirmation subscribes.
const confirmSource = "optin:confirm"

// ErrInvalidLink is the one answer for a confirmation token that is forged,
// altered, expired or names a subscriber that no longer exists.
var ErrInvalidLink = apperr.New(apperr.NotFound, "this confirmation link is invalid or has expired")

// token signs (account, subscriber, expiry in Unix seconds).
func (s *Service) token(accountID, subscriberID int64, expires time.Time) string {
	var buf [3 * binary.MaxVarintLen64]byte
	p := binary.AppendUvarint(buf[:0], uint64(accountID))
	p = binary.AppendUvarint(p, uint64(subscriberID))
	p = binary.AppendUvarint(p, uint64(expires.Unix()))
	return s.signer.Seal(purpose, p)
}

type claims struct{ accountID, subscriberID int64 }

// verify checks a token's signature and expiry.
func (s *Service) verify(token string) (claims, error) {
	p, err := s.signer.Open(purpose, token)
	if err != nil {
		return claims{}, ErrInvalidLink
	}
	var v [3]uint64
	for i := range v {
		x, n := binary.Uvarint(p)
		if n <= 0 || x == 0 || x > 1<<62 {
			return claims{}, ErrInvalidLink
		}
		v[i], p = x, p[n:]
	}
	if len(p) != 0 || s.opts.Now().Unix() >= int64(v[2]) {
		return claims{}, ErrInvalidLink
	}
	return claims{accountID: int64(v[0]), subscriberID: int64(v[1])}, nil
}

// Pending is what the confirmation page shows: the names of the lists the address
// is about to confirm (none when there is nothing left to confirm).
type Pending struct {
	Language string
	Lists    []string
}

// Lookup verifies token and returns what confirming would do, changing nothing
// (GET: mail scanners open links on their own).
func (s *Service) Lookup(ctx context.Context, token string) (Pending, error) {
	c, err := s.verify(token)
	if err != nil {
		return Pending{}, err
	}
	return s.pending(ctx, s.pool, c)
}

func (s *Service) pending(ctx context.Context, db store.DBTX, c claims) (Pending, error) {
	rows, err := store.New(db).OptinPendingLists(ctx, store.OptinPendingListsParams{AccountID: c.accountID, SubscriberID: c.subscriberID})
	if err != nil {
		return Pending{}, err
	}
	if len(rows) == 0 {
		// No pending list: the subscriber is gone (purged, deleted) or has
		// confirmed already; only the latter keeps the link meaningful.
		status, err := store.New(db).SubscriberStatusGet(ctx, store.SubscriberStatusGetParams{AccountID: c.accountID, ID: c.subscriberID})
		if err != nil || status != "confirmed" {
			return Pending{}, ErrInvalidLink
		}
		lang, err := store.New(db).OptinSubscriberLanguage(ctx, store.OptinSubscriberLanguageParams{AccountID: c.accountID, SubscriberID: c.subscriberID})
		return Pending{Language: lang}, err
	}
	p := Pending{Language: rows[0].Language}
	for _, r := range rows {
		p.Lists = append(p.Lists, r.Name)
	}
	return p, nil
}

// Confirm verifies token and confirms the address: the subscriber becomes
// confirmed (never downgraded) and every pending membership subscribed, with a
// subscriber.confirmed event, in one transaction. Confirming twice changes nothing
// the second time. A suppression is never lifted: a suppressed address stays
// unsent to, whatever it confirms.
func (s *Service) Confirm(ctx context.Context, token string) (Pending, error) {
	c, err := s.verify(token)
	if err != nil {
		return Pending{}, err
	}
	var out Pending
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		out, err = s.pending(ctx, tx, c)
		if err != nil {
			return err
		}
		q := store.New(tx)
		sub, err := q.OptinConfirmSubscriber(ctx, store.OptinConfirmSubscriberParams{AccountID: c.accountID, ID: c.subscriberID})
		if err != nil {
			if apperr.Is(postgres.Error(err, ""), apperr.NotFound) {
				return ErrInvalidLink
			}
			return err
		}
		lists, err := q.OptinConfirmMemberships(ctx, store.OptinConfirmMembershipsParams{Source: confirmSource,
			AccountID: c.accountID, SubscriberID: c.subscriberID})
		if err != nil {
			return fmt.Errorf("confirm memberships: %w", err)
		}
		if len(lists) == 0 && sub.OldStatus == "confirmed" {
			return nil // already confirmed: nothing changed, nothing to report
		}
		// Confirmed now (and a member of its lists): it may have entered a segment a
		// sequence triggers on.
		if err := sequence.EnrollSegments(ctx, tx, c.accountID, c.subscriberID, nil); err != nil {
			return err
		}
		return event.Emit(ctx, tx, c.accountID, event.SubscriberConfirmed, map[string]any{
			"email": sub.Email, "subscriber_id": sub.ID, "list_ids": lists, "source": confirmSource})
	})
	return out, err
}

// PurgeBatch is how many rows one purge statement deletes.
const PurgeBatch = 1000

// Purge deletes sign-ups still pending that were made before before, and pending
// memberships older than that, a batch at a time until none is left. Any number of
// replicas may run it at once (SKIP LOCKED): each deletes other rows.
func (s *Service) Purge(ctx context.Context, before time.Time) (subscribers, memberships int64, err error) {
	q := store.New(s.pool)
	for {
		n, err := q.OptinPurgeSubscribers(ctx, store.OptinPurgeSubscribersParams{Before: before, N: PurgeBatch})
		subscribers += n
		if err != nil || n < PurgeBatch {
			if err != nil {
				return subscribers, memberships, err
			}
			break
		}
	}
	for {
		n, err := q.OptinPurgeMemberships(ctx, store.OptinPurgeMembershipsParams{Before: before, N: PurgeBatch})
		memberships += n
		if err != nil || n < PurgeBatch {
			return subscribers, memberships, err
		}
	}
}

func jsonObject(m map[string]any) (json.RawMessage, error) { return json.Marshal(m) }
