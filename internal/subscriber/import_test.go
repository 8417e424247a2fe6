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
	"github.com/sendonce/sendonce/internal/operator"
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

// TestImportAcrossBatches: an import of several batches, merged ImportConns at a
// time while the later rows are still being validated, inserts every valid row once,
// into the list, and reports the invalid ones and the repeats of an earlier line
// (even one several batches back) in line order.
func TestImportAcrossBatches(t *testing.T) {
	t.Parallel()
	s, acc, ctx := setup(t)
	l, err := s.CreateList(ctx, acc, "imported", "", subscriber.ListOptin{})
	require.NoError(t, err)
	n := 5*subscriber.ImportBatchRows + 321
	rows := make([]subscriber.ImportRow, 0, n)
	want := map[int]string{} // line → reason's start
	for i := range n {
		line := i + 2
		email := fmt.Sprintf("u%05d@example.com", i)
		switch {
		case i%997 == 5:
			email = "not an address"
			want[line] = ""
		case i > subscriber.ImportBatchRows && i%1499 == 0:
			email = "U00003@Example.com" // line 5's address, in another case
			want[line] = "duplicate of line 5"
		}
		name := fmt.Sprintf("U%d", i)
		rows = append(rows, subscriber.ImportRow{Line: line, Email: email, Name: &name})
	}
	res, err := s.Import(ctx, acc, rows, nil, &l.ID)
	require.NoError(t, err)
	require.EqualValues(t, n-len(want), res.Inserted)
	require.Zero(t, res.Updated)
	require.Len(t, res.Rejected, len(want))
	for i, r := range res.Rejected {
		if i > 0 {
			require.Less(t, res.Rejected[i-1].Line, r.Line, "rejections in line order")
		}
		reason, ok := want[r.Line]
		require.True(t, ok, "line %d rejected: %s", r.Line, r.Reason)
		require.True(t, strings.HasPrefix(r.Reason, reason), "line %d: %s", r.Line, r.Reason)
	}
	total, _, err := s.Count(ctx, acc, subscriber.Filter{})
	require.NoError(t, err)
	require.EqualValues(t, n-len(want), total)
	members, _, err := s.Count(ctx, acc, subscriber.Filter{ListID: &l.ID})
	require.NoError(t, err)
	require.EqualValues(t, n-len(want), members)

	// The same import again updates every row and inserts none.
	res, err = s.Import(ctx, acc, rows, nil, &l.ID)
	require.NoError(t, err)
	require.Zero(t, res.Inserted)
	require.EqualValues(t, n-len(want), res.Updated)
}

// TestImportQuotaAcrossBatches: batches merged at once still take the subscribers
// quota one after another, so an import past it inserts exactly the room left and
// rejects the rest, whichever batch each row was in.
func TestImportQuotaAcrossBatches(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	accounts := account.NewService(pool)
	acc, _, err := accounts.Create(ctx, "a")
	require.NoError(t, err)
	limit := int64(2*subscriber.ImportBatchRows + 500)
	_, err = operator.NewService(pool, accounts).SetQuotas(ctx, acc.ID,
		operator.QuotaUpdate{SetSubscribers: true, Quotas: operator.Quotas{Subscribers: &limit}})
	require.NoError(t, err)
	s := subscriber.NewService(pool)
	n := 4 * subscriber.ImportBatchRows
	rows := make([]subscriber.ImportRow, n)
	for i := range rows {
		rows[i] = subscriber.ImportRow{Line: i + 2, Email: fmt.Sprintf("q%05d@example.com", i)}
	}
	res, err := s.Import(ctx, acc.ID, rows, nil, nil)
	require.NoError(t, err)
	require.Equal(t, limit, res.Inserted)
	require.Len(t, res.Rejected, n-int(limit))
	for _, r := range res.Rejected {
		require.Contains(t, r.Reason, "quota subscribers reached")
	}
	total, _, err := s.Count(ctx, acc.ID, subscriber.Filter{})
	require.NoError(t, err)
	require.Equal(t, limit, total)
}

// TestImportUpdatesWhatTheRowGives: an import row of an existing address changes
// the address's spelling, merges its attributes over the subscriber's, and
// changes the name and the status only when it gives them (an empty name given
// is a name); the existing subscriber joins the import's list too, and the new
// one beside it gets the defaults. The three rows differ in what they give, so
// they are merged in batches of their own.
func TestImportUpdatesWhatTheRowGives(t *testing.T) {
	t.Parallel()
	s, acc, ctx := setup(t)
	l, err := s.CreateList(ctx, acc, "imported", "", subscriber.ListOptin{})
	require.NoError(t, err)
	keep, err := s.Create(ctx, acc, subscriber.Input{Email: "keep@example.com", Name: "Ann",
		Status: subscriber.StatusConfirmed, Attributes: map[string]any{"a": 1.0, "b": 1.0}})
	require.NoError(t, err)
	change, err := s.Create(ctx, acc, subscriber.Input{Email: "change@example.com", Name: "Bob"})
	require.NoError(t, err)
	empty, confirmed := "", subscriber.StatusConfirmed
	res, err := s.Import(ctx, acc, []subscriber.ImportRow{
		{Line: 2, Email: "Keep@Example.com", Attributes: map[string]any{"b": 2.0, "c": 3.0}},
		{Line: 3, Email: "change@example.com", Name: &empty, Status: &confirmed},
		{Line: 4, Email: "new@example.com", Attributes: map[string]any{}},
	}, nil, &l.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Inserted)
	require.EqualValues(t, 2, res.Updated)

	got, err := s.Get(ctx, acc, keep.ID)
	require.NoError(t, err)
	require.Equal(t, "Keep@example.com", got.Email, "the local part's spelling (the domain is stored in lower case)")
	require.Equal(t, "Ann", got.Name)
	require.Equal(t, subscriber.StatusConfirmed, got.Status)
	require.Equal(t, map[string]any{"a": 1.0, "b": 2.0, "c": 3.0}, got.Attributes)
	got, err = s.Get(ctx, acc, change.ID)
	require.NoError(t, err)
	require.Empty(t, got.Name)
	require.Equal(t, subscriber.StatusConfirmed, got.Status)
	members, err := s.List(ctx, acc, subscriber.Filter{ListID: &l.ID, Membership: "any", Limit: 10})
	require.NoError(t, err)
	require.Len(t, members, 3, "existing and new subscribers join the list")
	for _, m := range members {
		if m.Email == "new@example.com" {
			require.Empty(t, m.Name)
			require.Equal(t, subscriber.StatusPending, m.Status)
		}
	}
}

// TestImportWhileSubscribersAreDeleted: subscribers of the imported addresses are
// deleted while imports of them run. Every import reports every row inserted or
// updated (none lost between the conflict and its update), and each address ends
// up existing once.
func TestImportWhileSubscribersAreDeleted(t *testing.T) {
	t.Parallel()
	s, acc, ctx := setup(t)
	const n = 3 * subscriber.ImportBatchRows
	rows := make([]subscriber.ImportRow, n)
	for i := range rows {
		rows[i] = subscriber.ImportRow{Line: i + 2, Email: fmt.Sprintf("d%05d@example.com", i)}
	}
	_, err := s.Import(ctx, acc, rows, nil, nil)
	require.NoError(t, err)
	stop := make(chan struct{})
	deleterDone := make(chan error, 1)
	go func() {
		var deleted int
		defer func() { t.Logf("%d subscribers deleted while the imports ran", deleted) }()
		for {
			select {
			case <-stop:
				deleterDone <- nil
				return
			default:
			}
			page, err := s.List(ctx, acc, subscriber.Filter{Limit: 50})
			if err != nil {
				deleterDone <- err
				return
			}
			for _, sub := range page {
				if err := s.Delete(ctx, acc, sub.ID); err != nil && !apperr.Is(err, apperr.NotFound) {
					deleterDone <- err
					return
				}
				deleted++
			}
		}
	}()
	for range 5 {
		res, err := s.Import(ctx, acc, rows, nil, nil)
		require.NoError(t, err)
		require.EqualValues(t, n, res.Inserted+res.Updated, "every row inserted or updated")
		require.Empty(t, res.Rejected)
	}
	close(stop)
	require.NoError(t, <-deleterDone)
	res, err := s.Import(ctx, acc, rows, nil, nil)
	require.NoError(t, err)
	require.EqualValues(t, n, res.Inserted+res.Updated)
	total, _, err := s.Count(ctx, acc, subscriber.Filter{})
	require.NoError(t, err)
	require.EqualValues(t, n, total)
}
