package segment_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/segment"
	"github.com/sendonce/sendonce/internal/subscriber"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestMembersPagedAndCounted: a segment's members, read a page at a time from a
// keyset position, are exactly the subscribers its filter selects now, in id
// order, each once; the count is exact below subscriber.CountBound and stops at
// it beyond, the preview's too; another account's segment is not found.
func TestMembersPagedAndCounted(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	var pros []int64
	for i := range 23 {
		plan := "free"
		if i%2 == 1 {
			plan = "pro"
		}
		id := f.subscriber(i, map[string]any{"plan": plan})
		if plan == "pro" {
			pros = append(pros, id)
		}
	}
	seg, err := f.svc.Create(ctx, f.acct, "pro", segment.Filter{Match: `$.plan == "pro"`})
	require.NoError(t, err)

	var got []int64
	after := int64(0)
	for range 10 {
		page, err := f.svc.Members(ctx, f.acct, seg.ID, after, 5)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page), 5)
		for _, s := range page {
			require.Equal(t, "pro", s.Attributes["plan"])
			got = append(got, s.ID)
		}
		if len(page) < 5 {
			break
		}
		after = page[len(page)-1].ID
	}
	require.Equal(t, pros, got, "every member once, in id order")
	n, exact, err := f.svc.MembersCount(ctx, f.acct, seg.ID)
	require.NoError(t, err)
	require.Equal(t, int64(len(pros)), n)
	require.True(t, exact)

	// Now: a subscriber who stops matching leaves the segment's members.
	_, err = f.pool.Exec(ctx, `UPDATE subscribers SET attributes = '{"plan":"free"}' WHERE id = $1`, pros[0])
	require.NoError(t, err)
	page, err := f.svc.Members(ctx, f.acct, seg.ID, 0, 100)
	require.NoError(t, err)
	require.Len(t, page, len(pros)-1)
	require.Equal(t, pros[1], page[0].ID)

	other := testfactory.New(f.pool).Account(t, "b").ID
	_, err = f.svc.Members(ctx, other, seg.ID, 0, 10)
	require.Equal(t, apperr.NotFound, apperr.CodeOf(err))
	_, _, err = f.svc.MembersCount(ctx, other, seg.ID)
	require.Equal(t, apperr.NotFound, apperr.CodeOf(err))

	// Past the bound the count stops there and says it is not exact.
	f.make.Subscribers(t, f.acct, "n", subscriber.CountBound, "confirmed")
	all, err := f.svc.Create(ctx, f.acct, "confirmed", segment.Filter{Statuses: []string{"confirmed"}})
	require.NoError(t, err)
	n, exact, err = f.svc.MembersCount(ctx, f.acct, all.ID)
	require.NoError(t, err)
	require.Equal(t, int64(subscriber.CountBound), n)
	require.False(t, exact)
	// So does the preview's (the API says it is not exact).
	total, _, err := f.svc.Preview(ctx, f.acct, all.Filter, 1)
	require.NoError(t, err)
	require.Equal(t, int64(subscriber.CountBound), total)
}
