package suppression

import (
	"context"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// List returns up to limit suppressions of the account whose address sorts after
// afterEmail ("" for the first page), in address order: suppressions have no id, the
// lower-case address is their key.
func List(ctx context.Context, db store.DBTX, accountID int64, afterEmail string, limit int) ([]Suppression, error) {
	rows, err := store.New(db).SuppressionList(ctx, store.SuppressionListParams{AccountID: accountID, AfterEmail: afterEmail, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Suppression, len(rows))
	for i, r := range rows {
		out[i] = Suppression{Email: r.EmailLower, Reason: r.Reason, Source: r.Source, CreatedAt: r.CreatedAt}
	}
	return out, nil
}

// Get returns the suppression of email; an address not suppressed is not found.
func Get(ctx context.Context, db store.DBTX, accountID int64, email string) (Suppression, error) {
	addr, err := address.Parse(email)
	if err != nil {
		return Suppression{}, apperr.Invalidf("/email", "%s", err.Error())
	}
	r, err := store.New(db).SuppressionGet(ctx, store.SuppressionGetParams{AccountID: accountID, EmailLower: addr.Lower})
	if err != nil {
		return Suppression{}, postgres.Error(err, "suppression")
	}
	return Suppression{Email: r.EmailLower, Reason: r.Reason, Source: r.Source, CreatedAt: r.CreatedAt}, nil
}

// Remove lifts the suppression of email. The subscriber's status is left as it is:
// someone who unsubscribed must opt in again to be sent to.
func Remove(ctx context.Context, db store.DBTX, accountID int64, email string) error {
	addr, err := address.Parse(email)
	if err != nil {
		return apperr.Invalidf("/email", "%s", err.Error())
	}
	n, err := store.New(db).SuppressionRemove(ctx, store.SuppressionRemoveParams{AccountID: accountID, EmailLower: addr.Lower})
	if err != nil {
		return err
	}
	if n == 0 {
		return apperr.New(apperr.NotFound, "suppression not found")
	}
	return nil
}
