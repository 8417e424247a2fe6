package idempotency_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/idempotency"
)

// TestLifecycle: claim, conflict, save, expiry, release and purge, with an injected clock.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	s := idempotency.NewStore(pool)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

	ok, err := s.Claim(ctx, acc.ID, "k", "POST", "/v1/lists", []byte("h1"), t0)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = s.Claim(ctx, acc.ID, "k", "POST", "/v1/lists", []byte("h1"), t0.Add(time.Hour))
	require.NoError(t, err)
	require.False(t, ok, "a live key is not claimed twice")
	p, found, err := s.Get(ctx, acc.ID, "k")
	require.NoError(t, err)
	require.True(t, found)
	require.Nil(t, p.Status, "still running")

	require.NoError(t, s.Save(ctx, acc.ID, "k", 201, []byte(`{}`)))
	p, _, err = s.Get(ctx, acc.ID, "k")
	require.NoError(t, err)
	require.Equal(t, 201, *p.Status)

	n, err := s.Purge(ctx, t0.Add(23*time.Hour), 10)
	require.NoError(t, err)
	require.Zero(t, n, "not yet expired")
	ok, err = s.Claim(ctx, acc.ID, "k", "POST", "/v1/lists", []byte("h2"), t0.Add(24*time.Hour))
	require.NoError(t, err)
	require.True(t, ok, "an expired key is a new request")
	p, _, err = s.Get(ctx, acc.ID, "k")
	require.NoError(t, err)
	require.Nil(t, p.Status)
	require.Equal(t, []byte("h2"), p.RequestHash)

	require.NoError(t, s.Release(ctx, acc.ID, "k"))
	_, found, err = s.Get(ctx, acc.ID, "k")
	require.NoError(t, err)
	require.False(t, found)

	ok, err = s.Claim(ctx, acc.ID, "old", "POST", "/v1/lists", []byte("h"), t0)
	require.NoError(t, err)
	require.True(t, ok)
	n, err = s.Purge(ctx, t0.Add(25*time.Hour), 10)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
}
