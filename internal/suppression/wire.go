package suppression

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/postgres"
)

// API is the accounts' suppression lists on Pool, in the wire types of api/, as
// the HTTP API calls them.
type API struct{ Pool *pgxpool.Pool }

// List returns a page of the account's suppressions after afterEmail (List).
func (a API) List(ctx context.Context, accountID int64, afterEmail string, limit int) ([]api.Suppression, error) {
	rows, err := List(ctx, a.Pool, accountID, afterEmail, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.Suppression, len(rows))
	for i, x := range rows {
		out[i] = toAPISuppression(x)
	}
	return out, nil
}

// Add suppresses an address at once (Add), reason manual and source api unless
// the request says otherwise: inserted is false when it already was, and the
// first record is returned. The suppression, the subscriber it unsubscribes and
// the request's audit entry commit together.
func (a API) Add(ctx context.Context, accountID int64, in api.SuppressionCreate) (_ api.Suppression, inserted bool, _ error) {
	reason, source := ReasonManual, "api"
	if in.Reason != nil {
		reason = string(*in.Reason)
	}
	if in.Source != nil {
		source = *in.Source
	}
	var x Suppression
	err := postgres.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		var err error
		x, inserted, err = Add(ctx, tx, accountID, in.Email, reason, source)
		return err
	})
	if err != nil {
		return api.Suppression{}, false, err
	}
	return toAPISuppression(x), inserted, nil
}

// Get returns the address's suppression; not found when it is not suppressed (Get).
func (a API) Get(ctx context.Context, accountID int64, email string) (api.Suppression, error) {
	x, err := Get(ctx, a.Pool, accountID, email)
	if err != nil {
		return api.Suppression{}, err
	}
	return toAPISuppression(x), nil
}

// Remove lifts the address's suppression (Remove).
func (a API) Remove(ctx context.Context, accountID int64, email string) error {
	return Remove(ctx, a.Pool, accountID, email)
}

func toAPISuppression(x Suppression) api.Suppression {
	return api.Suppression{Email: x.Email, Reason: api.SuppressionReason(x.Reason), Source: x.Source, CreatedAt: x.CreatedAt}
}
