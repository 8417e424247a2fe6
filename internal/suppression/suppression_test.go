package suppression_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/suppression"
	"github.com/sendonce/sendonce/internal/testfactory"
)

func TestAddIsIdempotentAndUnsubscribes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	q := store.New(pool)
	acc, err := q.AccountCreate(ctx, "a")
	require.NoError(t, err)
	testfactory.New(pool).Subscriber(t, acc.ID, testfactory.Subscriber{Email: "Ada@example.com", Status: "confirmed"})

	s, inserted, err := suppression.Add(ctx, pool, acc.ID, " ADA@Example.com", suppression.ReasonUnsubscribe, "test")
	require.NoError(t, err)
	require.True(t, inserted)
	require.Equal(t, "ada@example.com", s.Email)

	s, inserted, err = suppression.Add(ctx, pool, acc.ID, "ada@example.com", suppression.ReasonComplaint, "other")
	require.NoError(t, err)
	require.False(t, inserted)
	require.Equal(t, suppression.ReasonUnsubscribe, s.Reason, "the first record is kept")

	var status string
	require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM subscribers WHERE account_id = $1`, acc.ID).Scan(&status))
	require.Equal(t, "unsubscribed", status)

	_, _, err = suppression.Add(ctx, pool, acc.ID, "not an address", suppression.ReasonManual, "")
	require.True(t, apperr.Is(err, apperr.Invalid))
	_, _, err = suppression.Add(ctx, pool, acc.ID, "bob@example.com", "bored", "")
	require.True(t, apperr.Is(err, apperr.Invalid))
}
