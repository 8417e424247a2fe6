package unsubscribe

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Service applies one-click unsubscribes.
type Service struct {
	pool   *pgxpool.Pool
	signer *Signer
}

// NewService returns a Service verifying tokens with signer.
func NewService(pool *pgxpool.Pool, signer *Signer) *Service {
	return &Service{pool: pool, signer: signer}
}

// Signer is the signer the service verifies with; other signed links (tracking,
// double opt-in confirmations) share its Ring, its keys and rotation.
func (s *Service) Signer() *Signer { return s.signer }

// Recipient is what a verified token acted on, for the confirmation page (which
// shows the language and what an opt-out removed the address from, ScopeList or
// ScopeAccount, never the address a message token's claims hold) and the log.
type Recipient struct {
	Claims
	Language string
	Scope    string
}

// errNotFound is the one answer for a token that does not verify or names nobody,
// so the endpoint does not tell a forged token from a deleted recipient.
var errNotFound = apperr.New(apperr.NotFound, "no such unsubscribe link")

// Lookup verifies token and returns its recipient without changing anything (GET).
func (s *Service) Lookup(ctx context.Context, token string) (Recipient, error) {
	c, err := s.signer.Verify(token)
	if err != nil {
		return Recipient{}, errNotFound
	}
	t, err := s.resolve(ctx, s.pool, c)
	if err != nil {
		return Recipient{}, err
	}
	return Recipient{Claims: t.Claims, Language: t.language}, nil
}

// Unsubscribe is the one-click opt-out (RFC 8058): it verifies token and, at once,
// removes the recipient from the campaign's lists (the account's unsubscribe_scope
// is list) or suppresses the address for the account (scope account, a campaign
// sent to every subscriber rather than to lists, or a marketing message), recording
// the opt-out on the send. It is idempotent: a second call changes nothing and
// succeeds.
func (s *Service) Unsubscribe(ctx context.Context, token string) (Recipient, error) {
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
		scope, err := oneClick(ctx, tx, t)
		if err != nil {
			return err
		}
		if err := recordOnSend(ctx, tx, t.Claims, SourceOneClick); err != nil {
			return err
		}
		out = Recipient{Claims: t.Claims, Language: t.language, Scope: scope}
		return nil
	})
	return out, err
}

// Where an opt-out recorded on a send came from, as campaign reports count them.
const (
	SourceOneClick    = "one_click"   // the List-Unsubscribe link (RFC 8058) and the page's button
	SourcePreferences = "preferences" // the preference page: lists left, or everything
)

// recordOnSend notes the opt-out on the send the token names, whatever its scope:
// a campaign's row of the subscriber, or a message's row (whose subscriber slot
// holds the message id), with where it came from. A deleted row records nothing.
func recordOnSend(ctx context.Context, tx pgx.Tx, c Claims, src string) error {
	slot := c.SubscriberID
	if c.Kind == KindMessage {
		slot = c.MessageID
	}
	if err := store.New(tx).SendRecordUnsubscribe(ctx, store.SendRecordUnsubscribeParams{
		Source: src, AccountID: c.AccountID, CampaignID: c.CampaignID, SubscriberID: slot,
	}); err != nil {
		return fmt.Errorf("record unsubscribe on send: %w", err)
	}
	return nil
}

// target is what a verified token acts on: for kind send, the subscriber (whose
// lists the page shows and changes) and the address the campaign went to; for
// kind message, the address alone.
type target struct {
	Claims
	email, language string
}

// resolve reads what a verified token names. Version 1 tokens carry no kind: one
// naming a message stream was signed for a marketing message, its subscriber slot
// holding the message id, so it is read as a message token (the address from the
// message's send row; once message retention deleted the row it names nobody and
// answers as a link that does not exist). Every other one names a campaign's
// subscriber, as it always did.
func (s *Service) resolve(ctx context.Context, db store.DBTX, c Claims) (target, error) {
	q := store.New(db)
	if c.Kind == KindMessage {
		// The account must still exist; the address and the message come from the
		// token, so the link works after the message is deleted.
		_, err := q.AccountUnsubscribeScope(ctx, c.AccountID)
		if err = postgres.Error(err, "account"); err != nil {
			if apperr.Is(err, apperr.NotFound) {
				return target{}, errNotFound
			}
			return target{}, fmt.Errorf("unsubscribe account: %w", err)
		}
		return target{Claims: c, email: c.Email}, nil
	}
	row, err := q.UnsubscribeRecipient(ctx, store.UnsubscribeRecipientParams{
		AccountID: c.AccountID, SubscriberID: c.SubscriberID, CampaignID: c.CampaignID,
	})
	err = postgres.Error(err, "recipient")
	switch {
	case apperr.Is(err, apperr.NotFound) || (err == nil && row.Email == ""):
		return target{}, errNotFound
	case err != nil:
		return target{}, fmt.Errorf("unsubscribe recipient: %w", err)
	}
	if row.Kind == streamKind {
		c.Kind, c.MessageID, c.SubscriberID, c.Email = KindMessage, c.SubscriberID, 0, row.Email
	}
	return target{Claims: c, email: row.Email, language: row.Language}, nil
}

// streamKind is the kind of the campaigns row that is an account's message stream.
const streamKind = "messages"
