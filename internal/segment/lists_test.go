package segment_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/segment"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/subscriber"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// The list test of the predicate, and the top-level one of the InLists forms: the
// three lines of each EXISTS (the inner one closes the predicate's term as well).
var (
	predicateListTest = regexp.MustCompile(`OR EXISTS \(\n\s*(SELECT 1 FROM list_members m\n[^\n]*\n[^\n]*)\)\)\n`)
	topLevelListTest  = regexp.MustCompile(`\n  AND EXISTS \(\n\s*(SELECT 1 FROM list_members m\n[^\n]*\n[^\n]*)\)\n`)
)

// TestListConditionIsThePredicates: the InLists forms' own list condition says what
// the predicate's list test says, word for word but for the parameter's name, so
// moving the lists out of the predicate changes where the test runs, not which
// subscribers it selects.
func TestListConditionIsThePredicates(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../db/queries/segments.sql")
	require.NoError(t, err)
	src := string(raw)
	inner := predicateListTest.FindAllStringSubmatch(src, -1)
	top := topLevelListTest.FindAllStringSubmatch(src, -1)
	require.Len(t, inner, 4, "the predicate in SegmentPreviewCount, SegmentPreviewSample and their InLists forms")
	require.Len(t, top, 2, "SegmentPreviewCountInLists and SegmentPreviewSampleInLists")
	want := spaces.ReplaceAllString(strings.ReplaceAll(inner[0][1], "@segment_list_ids", "@in_list_ids"), " ")
	for _, m := range top {
		require.Equal(t, want, spaces.ReplaceAllString(m[1], " "))
	}
}

// TestPreviewWithListsAndWithout: a filter with lists and one without select the
// subscribers a plain reading of the filter selects — in the preview's count and
// sample, a segment's member pages and its count — whichever query the service
// runs for them; another account's subscribers and memberships are never counted,
// even a membership row of another account in this account's list (or this
// account's subscriber in a list with another account's membership row).
func TestPreviewWithListsAndWithout(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := f.pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	// Twelve subscribers: every third pending, in l1 (subscribed) when even, in l2
	// when divisible by three; s3 unsubscribed from l1, s5 pending in l2.
	var subs []int64
	for i := range 12 {
		subs = append(subs, f.subscriber(i, map[string]any{"n": i}))
	}
	l1, l2, l3 := f.make.List(t, f.acct, "l1"), f.make.List(t, f.acct, "l2"), f.make.List(t, f.acct, "l3")
	var in1, in2 []int64
	for i, id := range subs {
		if i%3 == 1 {
			exec(`UPDATE subscribers SET status = 'pending' WHERE id = $1`, id)
		}
		if i%2 == 0 || i == 3 {
			in1 = append(in1, id)
		}
		if i%3 == 0 || i == 5 {
			in2 = append(in2, id)
		}
	}
	f.make.Members(t, f.acct, l1, in1...)
	f.make.Members(t, f.acct, l2, in2...)
	exec(`UPDATE list_members SET status = 'unsubscribed' WHERE list_id = $1 AND subscriber_id = $2`, l1, subs[3])
	exec(`UPDATE list_members SET status = 'pending' WHERE list_id = $1 AND subscriber_id = $2`, l2, subs[5])

	// Another account: its own subscribers in its own list, one of them written into
	// this account's l1 (a membership row of the other account), and this account's
	// s1 written into the other account's list and into l3 under the other account.
	other := f.make.Account(t, "b").ID
	theirs := f.make.Subscriber(t, other, testfactory.Subscriber{Email: "theirs@example.com", Status: "confirmed"})
	theirList := f.make.List(t, other, "theirs")
	f.make.Members(t, other, theirList, theirs)
	exec(`INSERT INTO list_members (list_id, subscriber_id, account_id) VALUES ($1, $2, $3), ($4, $5, $3), ($6, $5, $3)`,
		l1, theirs, other, theirList, subs[1], l3)

	status := map[int64]string{}
	for i, id := range subs {
		status[id] = "confirmed"
		if i%3 == 1 {
			status[id] = "pending"
		}
	}
	subscribed := map[int64][]int64{l1: in1, l2: in2, l3: nil}
	subscribed[l1] = slices.DeleteFunc(slices.Clone(in1), func(id int64) bool { return id == subs[3] })
	subscribed[l2] = slices.DeleteFunc(slices.Clone(in2), func(id int64) bool { return id == subs[5] })
	// want is the filter read plainly: any status when none is named, any list's
	// subscribed members when lists are named.
	want := func(fl segment.Filter) []int64 {
		var out []int64
		for _, id := range subs {
			if len(fl.Statuses) > 0 && !slices.Contains(fl.Statuses, status[id]) {
				continue
			}
			if len(fl.ListIDs) > 0 && !slices.ContainsFunc(fl.ListIDs, func(l int64) bool { return slices.Contains(subscribed[l], id) }) {
				continue
			}
			out = append(out, id)
		}
		return out
	}
	filters := []segment.Filter{
		{},
		{ListIDs: []int64{}},
		{Statuses: []string{"confirmed"}},
		{ListIDs: []int64{l1}},
		{ListIDs: []int64{l2}, Statuses: []string{"confirmed"}},
		{ListIDs: []int64{l1, l2}},
		{ListIDs: []int64{l1, l2}, Statuses: []string{"pending"}},
		{ListIDs: []int64{l3}},
	}
	for i, fl := range filters {
		exp := want(fl)
		n, sample, err := f.svc.Preview(ctx, f.acct, fl, len(subs)+5)
		require.NoError(t, err)
		require.Equal(t, int64(len(exp)), n, "filter %d %+v: the preview's count", i, fl)
		require.Equal(t, exp, ids(sample), "filter %d %+v: the preview's sample", i, fl)

		seg, err := f.svc.Create(ctx, f.acct, "g"+strings.Repeat("x", i), fl)
		require.NoError(t, err)
		var paged []int64
		for after := int64(0); ; {
			page, err := f.svc.Members(ctx, f.acct, seg.ID, after, 2)
			require.NoError(t, err)
			paged = append(paged, ids(page)...)
			if len(page) < 2 {
				break
			}
			after = page[len(page)-1].ID
		}
		require.Equal(t, exp, paged, "filter %d %+v: the segment's member pages", i, fl)
		m, exact, err := f.svc.MembersCount(ctx, f.acct, seg.ID)
		require.NoError(t, err)
		require.True(t, exact)
		require.Equal(t, int64(len(exp)), m, "filter %d %+v: the segment's member count", i, fl)
	}
	// The other account's own list, previewed as theirs, has their one subscriber
	// (this account's s1, written into it, is not theirs).
	n, sample, err := f.svc.Preview(ctx, other, segment.Filter{ListIDs: []int64{theirList}}, 10)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.Equal(t, []int64{theirs}, ids(sample))
}

// TestPreviewRunsTheListsForm: a filter with lists is counted and sampled by the
// InLists queries (its lists a top-level condition), one without by the plain
// ones, and a count of 0 looks for no sample; the InLists plan reads list_members
// in a join, not in a subplan run for each subscriber.
func TestPreviewRunsTheListsForm(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	s := f.subscriber(1, map[string]any{})
	l := f.make.List(t, f.acct, "l")
	f.make.Members(t, f.acct, l, s)

	rec := &statements{}
	cfg := f.pool.Config()
	cfg.ConnConfig.Tracer = rec
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(traced.Close)
	svc := segment.NewService(traced, segment.DefaultTimeout)
	ran := func(fl segment.Filter) []string {
		t.Helper()
		rec.mu.Lock()
		rec.sql = nil
		rec.mu.Unlock()
		_, _, err := svc.Preview(ctx, f.acct, fl, 10)
		require.NoError(t, err)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		var names []string
		for _, q := range rec.sql {
			if m := queryName.FindStringSubmatch(q); m != nil && strings.HasPrefix(m[1], "SegmentPreview") {
				names = append(names, m[1])
			}
		}
		return names
	}
	require.Equal(t, []string{"SegmentPreviewCountInLists", "SegmentPreviewSampleInLists"}, ran(segment.Filter{ListIDs: []int64{l}}))
	require.Equal(t, []string{"SegmentPreviewCount", "SegmentPreviewSample"}, ran(segment.Filter{Statuses: []string{"confirmed"}}))
	// Nobody matches: no sample is looked for (it would read every subscriber).
	require.Equal(t, []string{"SegmentPreviewCountInLists"}, ran(segment.Filter{ListIDs: []int64{l}, Statuses: []string{"pending"}}))

	var c captured
	_, err = store.New(&c).SegmentPreviewCountInLists(ctx, store.SegmentPreviewCountInListsParams{AccountID: f.acct,
		InListIds: []int64{l}, SegmentStatuses: []string{"confirmed"}, SegmentListIds: []int64{}, Bound: 100})
	require.NoError(t, err)
	tx, err := f.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // read only
	require.NoError(t, segment.Bound(ctx, store.New(tx), segment.DefaultTimeout))
	rows, err := tx.Query(ctx, "EXPLAIN (COSTS OFF) "+c.sql, c.args...)
	require.NoError(t, err)
	var plan []string
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		plan = append(plan, line)
	}
	require.NoError(t, rows.Err())
	text := strings.Join(plan, "\n")
	require.Contains(t, text, "list_members", text)
	require.NotContains(t, text, "SubPlan", "the lists are read in a join, and the predicate's list test is folded away:\n%s", text)
}

func ids(rows []subscriber.Subscriber) []int64 {
	var out []int64
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}
