package subscriber_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/subscriber"
)

func setup(t *testing.T) (*subscriber.Service, int64, context.Context) {
	t.Helper()
	pool := dbtest.New(t)
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	return subscriber.NewService(pool), acc.ID, ctx
}

// TestConcurrentOverlappingImports: imports that share addresses, listed in opposite
// orders, run at once. The upsert takes its row locks in address order, so they
// serialise on the shared rows instead of deadlocking, and every address exists once.
func TestConcurrentOverlappingImports(t *testing.T) {
	t.Parallel()
	s, acc, ctx := setup(t)
	const n = 2000
	csvOf := func(reverse bool) string {
		var b strings.Builder
		b.WriteString("email,name\n")
		for i := 0; i < n; i++ {
			j := i
			if reverse {
				j = n - 1 - i
			}
			fmt.Fprintf(&b, "u%d@example.com,U%d\n", j, j)
		}
		return b.String()
	}
	var wg sync.WaitGroup
	results := make([]subscriber.ImportResult, 4)
	errs := make([]error, 4)
	for k := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows, rejected, err := subscriber.ParseCSV(strings.NewReader(csvOf(k%2 == 1)), "")
			if err != nil {
				errs[k] = err
				return
			}
			results[k], errs[k] = s.Import(ctx, acc, rows, rejected, nil)
		}()
	}
	wg.Wait()
	var inserted, updated int64
	for k := range 4 {
		require.NoError(t, errs[k])
		inserted += results[k].Inserted
		updated += results[k].Updated
	}
	require.EqualValues(t, n, inserted)
	require.EqualValues(t, 3*n, updated)
	page, err := s.List(ctx, acc, subscriber.Filter{Limit: 3 * n})
	require.NoError(t, err)
	require.Len(t, page, n)
}

// TestImportKeepsOptOut: an import never resubscribes an unsubscribed address.
func TestImportKeepsOptOut(t *testing.T) {
	t.Parallel()
	s, acc, ctx := setup(t)
	sub, err := s.Create(ctx, acc, subscriber.Input{Email: "gone@example.com", Status: subscriber.StatusConfirmed})
	require.NoError(t, err)
	st := subscriber.StatusUnsubscribed
	_, err = s.Update(ctx, acc, sub.ID, subscriber.Patch{Status: &st})
	require.NoError(t, err)
	confirmed := subscriber.StatusConfirmed
	res, err := s.Import(ctx, acc, []subscriber.ImportRow{{Line: 1, Email: "GONE@example.com", Status: &confirmed}}, nil, nil)
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Updated)
	got, err := s.Get(ctx, acc, sub.ID)
	require.NoError(t, err)
	require.Equal(t, subscriber.StatusUnsubscribed, got.Status)
}

// TestImportRowLimit: one row past the limit refuses the whole request, before any write.
func TestImportRowLimit(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("email\n")
	for i := 0; i <= subscriber.MaxImportRows; i++ {
		fmt.Fprintf(&b, "u%d@example.com\n", i)
	}
	_, _, err := subscriber.ParseCSV(strings.NewReader(b.String()), "")
	require.True(t, apperr.Is(err, apperr.TooLarge), "%v", err)
}
