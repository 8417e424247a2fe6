package campaign_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
)

func setup(t *testing.T) (*campaign.Service, int64, context.Context) {
	t.Helper()
	pool := dbtest.New(t)
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	return campaign.NewService(pool), acc.ID, ctx
}

func str(s string) *string { return &s }

func draft(t *testing.T, s *campaign.Service, accountID int64, ctx context.Context) campaign.Campaign {
	t.Helper()
	c, err := s.Create(ctx, accountID, campaign.Fields{Name: str("c"), Subject: str("s"),
		FromEmail: str("a@example.com"), TextTemplate: str("hi")})
	require.NoError(t, err)
	return c
}

// TestApproveRace: many concurrent approvals of one draft; the compare-and-set lets
// exactly one win and every other sees a conflict naming the state it lost to.
func TestApproveRace(t *testing.T) {
	t.Parallel()
	s, acc, ctx := setup(t)
	c := draft(t, s, acc, ctx)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Approve(ctx, acc, c.ID, nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	won := 0
	for err := range errs {
		if err == nil {
			won++
			continue
		}
		var e *apperr.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, apperr.Conflict, e.Code)
		require.Equal(t, campaign.StatusApproved, e.Extra["current_status"])
	}
	require.Equal(t, 1, won)
}

// TestCancelVersusUnapprove: cancel and unapprove race on an approved campaign; one
// of them applies, and the end state is the winner's.
func TestCancelVersusUnapprove(t *testing.T) {
	t.Parallel()
	s, acc, ctx := setup(t)
	for range 5 {
		c := draft(t, s, acc, ctx)
		_, err := s.Approve(ctx, acc, c.ID, nil)
		require.NoError(t, err)
		var wg sync.WaitGroup
		var cancelErr, unapproveErr error
		wg.Add(2)
		go func() { defer wg.Done(); _, cancelErr = s.Cancel(ctx, acc, c.ID) }()
		go func() { defer wg.Done(); _, unapproveErr = s.Unapprove(ctx, acc, c.ID) }()
		wg.Wait()
		got, err := s.Get(ctx, acc, c.ID)
		require.NoError(t, err)
		switch {
		case cancelErr == nil && unapproveErr == nil:
			// unapprove first (approved → draft), then cancel (draft → cancelled).
			require.Equal(t, campaign.StatusCancelled, got.Status)
		case cancelErr == nil:
			require.True(t, apperr.Is(unapproveErr, apperr.Conflict))
			require.Equal(t, campaign.StatusCancelled, got.Status)
		default:
			t.Fatalf("cancel must apply from approved or draft: %v", cancelErr)
		}
	}
}

// TestOtherAccount: another account's campaign is not found, for reads and changes.
func TestOtherAccount(t *testing.T) {
	t.Parallel()
	s, acc, ctx := setup(t)
	c := draft(t, s, acc, ctx)
	other := acc + 1000
	_, err := s.Get(ctx, other, c.ID)
	require.True(t, apperr.Is(err, apperr.NotFound))
	_, err = s.Approve(ctx, other, c.ID, nil)
	require.True(t, apperr.Is(err, apperr.NotFound))
	require.True(t, apperr.Is(s.Delete(ctx, other, c.ID), apperr.NotFound))
	_, err = s.Update(ctx, other, c.ID, campaign.Fields{Name: str("x")})
	require.True(t, apperr.Is(err, apperr.NotFound))
}
