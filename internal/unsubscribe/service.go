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

// Signer is the key ring the service verifies with, for other signed links
// (double opt-in confirmations) to share its keys and rotation.
func (s *Service) Signer() *Signer { return s.signer }

// Recipient is what the confirmation page may show: no address, only the language,
// and what an opt-out removed the address from (ScopeList or ScopeAccount).
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
	row, err := s.recipient(ctx, s.pool, c)
	if err != nil {
		return Recipient{}, err
	}
	return Recipient{Claims: c, Language: row.Language}, nil
}

// Unsubscribe is the one-click opt-out (RFC 8058): it verifies token and, at once,
// removes the recipient from the campaign's lists (the account's unsubscribe_scope
// is list) or suppresses the address for the account (scope account, or a campaign
// sent to every subscriber rather than to lists), recording the opt-out on the
// campaign's send. It is idempotent: a second call changes nothing and succeeds.
func (s *Service) Unsubscribe(ctx context.Context, token string) (Recipient, error) {
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
		scope, err := oneClick(ctx, tx, c, row.Email)
		if err != nil {
			return err
		}
		if err := recordOnSend(ctx, tx, c); err != nil {
			return err
		}
		out = Recipient{Claims: c, Language: row.Language, Scope: scope}
		return nil
	})
	return out, err
}

// recordOnSend notes the opt-out on the send the token names, whatever its scope.
func recordOnSend(ctx context.Context, tx pgx.Tx, c Claims) error {
	if err := store.New(tx).SendRecordUnsubscribe(ctx, store.SendRecordUnsubscribeParams{
		AccountID: c.AccountID, CampaignID: c.CampaignID, SubscriberID: c.SubscriberID,
	}); err != nil {
		return fmt.Errorf("record unsubscribe on send: %w", err)
	}
	return nil
}

func (s *Service) recipient(ctx context.Context, db store.DBTX, c Claims) (store.UnsubscribeRecipientRow, error) {
	row, err := store.New(db).UnsubscribeRecipient(ctx, store.UnsubscribeRecipientParams{
		AccountID: c.AccountID, SubscriberID: c.SubscriberID, CampaignID: c.CampaignID,
	})
	err = postgres.Error(err, "recipient")
	switch {
	case apperr.Is(err, apperr.NotFound) || (err == nil && row.Email == ""):
		return row, errNotFound
	case err != nil:
		return row, fmt.Errorf("unsubscribe recipient: %w", err)
	}
	return row, nil
}
